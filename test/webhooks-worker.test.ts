// The webhooks as production runs them: the real worker process (worker/main.ts, the production entry point)
// on the test platform's database and Redis, nothing driven by hand. An action through the api records an event;
// the worker, woken by the database, fans it out and POSTs it signed to a loopback receiver.
import test from 'ava';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.ts';
import { startEntry, type EntryProcess } from './helpers/processes.ts';
import { until } from './helpers/wait.ts';

let p: Platform;
let worker: EntryProcess | undefined;
const receivers: Receiver[] = [];

test.before(async () => {
  p = await startPlatform({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
});

test.after.always(async () => {
  await worker?.stop();
  await Promise.all(receivers.map((r) => r.close()));
  await p?.close();
});

test.serial('the worker process delivers an event on its own, signed, soon after the commit', async (t) => {
  t.timeout(90_000);
  worker = startEntry('worker/main.ts', p.config);
  await worker.logged('worker.started');
  const team = await p.createTeam('Worker');
  const r = await startReceiver();
  receivers.push(r);
  const created = await p.request('POST', '/webhooks', {
    key: team.key,
    body: { endpoint: r.url, events: ['suppression.added', 'suppression.removed'] },
  });
  t.is(created.status, 201);
  const secret: string = created.body.signing_secret;

  const committed = Date.now();
  t.is(
    (await p.request('POST', '/suppressions', { key: team.key, body: { email: 'worker@example.com' } })).status,
    201,
  );
  await until(() => r.received.length >= 1, { timeoutMs: 20_000, what: 'the first webhook' });
  const delay = Date.now() - committed;
  t.log(`delivered ${delay} ms after the api answered`);
  // Woken by the commit: a fraction of a second on a quiet machine; the bound is for a busy CI machine.
  t.true(delay < 10_000);

  // A burst: each arrives once, in the order recorded.
  const emails = Array.from({ length: 20 }, (_, i) => `burst${i}@example.com`);
  for (const email of emails) await p.request('POST', '/suppressions', { key: team.key, body: { email } });
  await until(() => r.received.length >= 21, { timeoutMs: 20_000, what: 'the burst' });
  const bodies = r.received.map((x) => JSON.parse(x.body));
  t.deepEqual(
    bodies.map((b) => b.data.email),
    ['worker@example.com', ...emails],
  );
  t.true(bodies.every((b) => b.type === 'suppression.added'));
  for (const got of r.received) {
    const h = got.headers as Record<string, string>;
    t.deepEqual(
      new StandardWebhook(secret).verify(got.body, {
        'webhook-id': h['webhook-id'],
        'webhook-timestamp': h['webhook-timestamp'],
        'webhook-signature': h['webhook-signature'],
      }),
      JSON.parse(got.body),
    );
    t.deepEqual(
      new SvixWebhook(secret).verify(got.body, {
        'svix-id': h['svix-id'],
        'svix-timestamp': h['svix-timestamp'],
        'svix-signature': h['svix-signature'],
      }),
      JSON.parse(got.body),
    );
  }
  t.is(new Set(r.received.map((x) => x.headers['webhook-id'])).size, 21);
  // Their attempts are recorded a moment after the receiver has them.
  const statuses = await until(
    async () => {
      const now = await p.db('webhook_deliveries').where({ team_id: team.id }).pluck('status');
      return now.length === 21 && now.every((x: string) => x === 'success') ? now : undefined;
    },
    { what: '21 successful deliveries recorded' },
  );
  t.deepEqual(statuses, Array(21).fill('success'));
  // A clean stop: SIGTERM drains and exits 0.
  // Its other jobs (a DKIM key pool refill) may be running: they finish first.
  const code = await worker.stop(30_000);
  if (code !== 0) t.log(worker.output().slice(-3000));
  t.is(code, 0);
  t.regex(worker.output(), /"msg":"process.stopped"/);
  worker = undefined;
});
