// What the tracking listener refuses, and which hits it takes for a machine's: tokens tampered with, replayed on
// another team's (or another domain's) tracking host, used as the other kind, unknown hosts, other paths and methods
// are all the same 404 and record nothing; hits through Apple's proxy network (behind a trusted proxy), before the
// delivery was recorded, or within TRACKING_MACHINE_WINDOW_SECONDS of it are kept as a machine's and fire nothing.
import test from 'ava';
import { processDelivery } from '../mta/delivery/job.ts';
import { fanOutSettled } from '../shared/webhooks/fanout.ts';
import { rollUpSettled } from '../shared/email-metrics/rollup.ts';
import {
  htmlOf,
  startTrackingListener,
  startTrackingWorld,
  trackedSender,
  type TrackingWorld,
} from './helpers/tracking.ts';

let world: TrackingWorld;
test.before(async () => {
  world = await startTrackingWorld();
});
test.after.always(async () => {
  await world?.close();
});

/** One tracked send to `to`; its copy's first link and pixel. */
async function trackedCopy(sender: Awaited<ReturnType<typeof trackedSender>>, to: string) {
  const id = await sender.send({ to, subject: 'Hi', html: '<p><a href="https://shop.example.test/x">shop</a></p>' });
  await processDelivery(world.w.deps, id);
  const copy = await htmlOf(world.w.sink.deliveredTo(to).at(-1)!.raw);
  return { id, click: copy.hrefs[0], open: copy.images[0] };
}

const engagements = async (emailId: string) =>
  Number((await world.w.p.db('email_engagements').where({ email_id: emailId }).count({ n: '*' }).first())!.n);

const swapHost = (url: string, host: string) => {
  const u = new URL(url);
  u.hostname = host;
  return u.toString();
};

test('tampered tokens, tokens replayed for another team or domain, wrong kinds and unknown hosts: the same 404, nothing recorded', async (t) => {
  const { w, listener } = world;
  w.mx('refuse-inbox.test');
  const a = await trackedSender(w, 'refuse-a.test');
  const b = await trackedSender(w, 'refuse-b.test');
  // A second domain of team A: its tracking host is A's too, but the token is not its.
  const a2 = await trackedSender(w, 'refuse-a2.test');
  const sent = await trackedCopy(a, 'ann@refuse-inbox.test');
  const token = (url: string) => new URL(url).pathname.slice(3);
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  const clickPath = new URL(sent.click).pathname;
  const base = new URL(sent.click).origin;

  const reference = await listener.hit(`${base}/c/${flip(token(sent.click), 30)}`);
  t.is(reference.status, 404);
  t.is(reference.text, 'Not found\n');
  const refusals: [string, string, { method?: string }?][] = [
    ['a character changed in the tag', `${base}/c/${flip(token(sent.click), token(sent.click).length - 2)}`],
    ['a character changed in the URL', `${base}/c/${flip(token(sent.click), 40)}`],
    ['a character changed in the recipient', `${base}/c/${flip(token(sent.click), 5)}`],
    ['the pixel tampered with', `${base}/o/${flip(token(sent.open), 10)}`],
    ["on team B's tracking host", swapHost(sent.click, b.trackingHost)],
    ["the pixel on team B's tracking host", swapHost(sent.open, b.trackingHost)],
    ["on another domain's host of the same team", swapHost(sent.click, a2.trackingHost)],
    ['an unknown host', swapHost(sent.click, 'links.nobody.test')],
    ['the domain itself as the host', swapHost(sent.click, 'refuse-a.test')],
    ['a click token as the pixel', `${base}/o/${token(sent.click)}`],
    ['the pixel as a click', `${base}/c/${token(sent.open)}`],
    ['cut short', `${base}/c/${token(sent.click).slice(0, -3)}`],
    ['padded', `${base}/c/${token(sent.click)}AAAA`],
    ['empty', `${base}/c/`],
    ['another path', `${base}/x/${token(sent.click)}`],
    ['a trailing slash', `${base}${clickPath}/`],
    ['POST', sent.click, { method: 'POST' }],
    ['DELETE', sent.click, { method: 'DELETE' }],
  ];
  for (const [what, url, o] of refusals) {
    const res = await listener.hit(url, o);
    t.is(res.status, 404, what);
    t.is(res.text, reference.text, what);
  }
  const garbageHost = await listener.hit(sent.click, { headers: { host: 'not a host' } });
  t.is(garbageHost.status, 404);
  await listener.recorder.flush();
  t.is(await engagements(sent.id), 0, 'nothing refused was recorded');

  // The genuine ones still work, a query string changes nothing.
  t.is((await listener.hit(sent.click)).status, 302);
  t.is((await listener.hit(`${sent.open}?utm=1`)).status, 200);
  await listener.recorder.flush();
  t.is(await engagements(sent.id), 2);

  // The TLS proxy's question before a certificate: only tracking hosts.
  const ask = (name: string) =>
    listener.hit(`http://${world.w.p.config.PLATFORM_TRACKING_HOST}/tls-allowed?domain=${name}`);
  t.is((await ask(a.trackingHost)).status, 200);
  t.is((await ask(a.trackingHost.toUpperCase())).status, 200);
  for (const name of ['refuse-a.test', 'links.nobody.test', '', 'a b', `x.${a.trackingHost}`])
    t.is((await ask(name)).status, 404, name);
});

test('a domain that turns tracking off keeps answering the links already in inboxes; a deleted domain does not', async (t) => {
  const { w, listener } = world;
  w.mx('refuse-later.test');
  const s = await trackedSender(w, 'refuse-off.test');
  const sent = await trackedCopy(s, 'bob@refuse-later.test');
  const off = await w.p.request('PATCH', `/domains/${s.domain.id}`, {
    key: s.team.key,
    body: { open_tracking: false, click_tracking: false },
  });
  t.is(off.status, 200);
  t.is((await listener.hit(sent.click)).status, 302, 'the host is still the domain’s (its answer kept at most 30 s)');
  const gone = await trackedSender(w, 'refuse-gone.test');
  const lost = await trackedCopy(gone, 'cy@refuse-later.test');
  t.is((await w.p.request('DELETE', `/domains/${gone.domain.id}`, { key: gone.team.key })).status, 200);
  // A fresh listener: nothing kept from before the deletion.
  const fresh = await startTrackingListener(w);
  t.teardown(() => fresh.close());
  t.is((await fresh.hit(lost.click)).status, 404);
});

test('machine hits: Apple proxy addresses behind a trusted proxy, scanners within the window or before the delivery; kept, not counted, no event', async (t) => {
  const { w } = world;
  w.mx('refuse-machines.test');
  const s = await trackedSender(w, 'refuse-mach.test');
  const windowed = await startTrackingListener(w, { machineWindowSeconds: 3600, config: { TRUST_PROXY: true } });
  t.teardown(() => windowed.close());
  const sent = await trackedCopy(s, 'dan@refuse-machines.test');
  const forwarded = (ip: string) => ({ headers: { 'x-forwarded-for': `${ip}, 10.0.0.1` } });
  t.is((await windowed.hit(sent.open, forwarded('17.58.1.2'))).status, 200);
  t.is((await windowed.hit(sent.click, forwarded('198.51.100.9'))).status, 302);
  await windowed.recorder.flush();
  // Before the delivery is recorded (the scanner of the receiving MX): the recipient's delivered_at put back to null.
  await w.p.db('email_recipients').where({ email_id: sent.id }).update({ delivered_at: null });
  t.is((await windowed.hit(sent.click, forwarded('198.51.100.9'))).status, 302);
  await windowed.recorder.flush();
  const rows = await w.p.db('email_engagements').where({ email_id: sent.id }).orderBy('created_at');
  t.deepEqual(
    rows.map((r) => [r.kind, r.machine, r.ip]),
    [
      ['open', 'apple_privacy_proxy', '17.58.1.0'],
      ['click', 'delivery_window', '198.51.100.0'],
      ['click', 'before_delivery', '198.51.100.0'],
    ],
  );
  await fanOutSettled(w.p.db);
  t.deepEqual(
    await w.p.db('events').where({ team_id: s.team.id }).whereIn('type', ['email.opened', 'email.clicked']),
    [],
  );
  t.is((await w.p.db('email_recipient_engagement').where({ email_id: sent.id })).length, 0);
  const activity = await w.p
    .db('contact_activity')
    .where({ team_id: s.team.id, address: 'dan@refuse-machines.test' })
    .first();
  t.true(!activity?.last_opened_at && !activity?.last_clicked_at, 'machines are no activity of the address');
  await rollUpSettled(w.p.db);
  const res = await w.p.request('GET', `/emails/metrics?email_id=${sent.id}&metrics=opened,clicked,unique_opened`, {
    key: s.team.key,
  });
  t.deepEqual(res.body.totals, { opened: 0, clicked: 0, unique_opened: 0 });
  t.is((await w.p.request('GET', `/emails/${sent.id}`, { key: s.team.key })).body.last_event, 'delivered');
});
