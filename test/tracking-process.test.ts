// Tracking with the real processes: the api entry point (api/main.ts) serving its tracking listener on TRACKING_PORT
// beside its REST port (in a thread of its own, whose metrics reach the api's /metrics), and the worker entry point
// (worker/main.ts) rolling the delivery events up and sending the webhooks. A hit answered by the api is recorded even
// when the api is stopped a moment later (SIGTERM flushes what waits), the worker delivers its `email.opened`, and
// GET /emails/metrics counts it all.
import test from 'ava';
import { processDelivery } from '../mta/delivery/job.ts';
import { startEntry, type EntryProcess } from './helpers/processes.ts';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.ts';
import { freePort } from './helpers/ports.ts';
import { until } from './helpers/wait.ts';
import { htmlOf, startTrackingWorld, trackedSender, type TrackingWorld } from './helpers/tracking.ts';
import { nodeRequest } from './helpers/http.ts';
import { scrape } from './helpers/metrics.ts';

let world: TrackingWorld;
let receiver: Receiver;
const procs: EntryProcess[] = [];
test.before(async () => {
  world = await startTrackingWorld();
  receiver = await startReceiver();
});
test.after.always(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  await receiver?.close();
  await world?.close();
});

test('the api process serves the pixel and links on TRACKING_PORT; the worker rolls up and delivers the webhook', async (t) => {
  const { w } = world;
  w.mx('process-inbox.test');
  const sender = await trackedSender(w, 'process-shop.test');
  const hook = await w.p.request('POST', '/webhooks', {
    key: sender.team.key,
    body: { endpoint: receiver.url, events: ['email.opened', 'email.clicked'] },
  });
  t.is(hook.status, 201);
  const id = await sender.send({
    to: 'ann@process-inbox.test',
    subject: 'Processes',
    html: '<p><a href="https://shop.example.test/p">shop</a></p>',
  });
  await processDelivery(w.deps, id);
  const copy = await htmlOf(w.sink.deliveredTo('ann@process-inbox.test')[0].raw);

  // The links name the world's listener port; the api process listens on one of its own, reached with the same Host.
  const port = await freePort();
  const metricsPort = await freePort();
  const api = startEntry('api/main.ts', w.p.config, {
    PORT: '0',
    TRACKING_PORT: String(port),
    METRICS_API_PORT: String(metricsPort),
    METRICS_HOST: '127.0.0.1',
  });
  procs.push(api);
  await api.logged('tracking.listening');
  const hit = (url: string) => {
    const u = new URL(url);
    return nodeRequest(`http://127.0.0.1:${port}`, {
      method: 'GET',
      path: u.pathname,
      headers: { host: u.host, 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' },
    });
  };
  t.is((await hit(copy.images[0])).status, 200);
  const click = await hit(copy.hrefs[0]);
  t.is(click.status, 302);
  t.is(click.headers.location, 'https://shop.example.test/p');
  const counted = await until(
    async () => {
      const m = await scrape(metricsPort);
      const hits = (kind: string) => m.value('postwerk_tracking_hits_total', { kind, verdict: 'human' });
      return hits('open') === 1 && hits('click') === 1 && m;
    },
    { what: "the tracking thread's hits in the api's metrics", timeoutMs: 10_000 },
  );
  t.is(counted.value('postwerk_tracking_hits_total', { kind: 'open', verdict: 'refused' }) ?? 0, 0);
  t.is(await api.stop(30_000), 0, 'a clean stop');
  t.deepEqual(
    (await w.p.db('email_engagements').where({ email_id: id }).orderBy('created_at')).map((r) => r.kind),
    ['open', 'click'],
    'the stop recorded what was waiting',
  );

  const worker = startEntry('worker/main.ts', w.p.config, {});
  procs.push(worker);
  await worker.logged('worker.started');
  await until(() => receiver.received.length >= 2, { what: 'the webhooks', timeoutMs: 20_000 });
  t.deepEqual(receiver.received.map((r) => JSON.parse(r.body).type).sort(), ['email.clicked', 'email.opened']);
  const metrics = await until(
    async () => {
      const res = await w.p.request(
        'GET',
        `/emails/metrics?email_id=${id}&metrics=sent,delivered,opened,clicked,unique_opened,unique_clicked`,
        { key: sender.team.key },
      );
      return res.body.totals?.unique_clicked === 1 && res.body.totals;
    },
    { what: 'the rollup', timeoutMs: 20_000 },
  );
  t.deepEqual(metrics, { sent: 1, delivered: 1, opened: 1, clicked: 1, unique_opened: 1, unique_clicked: 1 });
  t.is(await worker.stop(30_000), 0, 'a clean stop (a loaded machine may take a while)');
});
