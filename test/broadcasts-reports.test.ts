// A broadcast's reports from what really happened to its copies: clicks and opens followed over HTTP on the tracking
// listener (people counted, a link scanner and a HEAD request flagged as machines and counted nowhere), bounces as the
// recipients' MX answered them (a 550 and a mailbox full), a complaint as a mailbox provider's feedback loop sends it
// to our MX at the copy's return path, and unsubscribes made through each copy's own link (the one-click and the
// page's form), not through the contacts API.
import test from 'ava';
import { created, fanOutAndDeliver } from './helpers/broadcasts.ts';
import { htmlOf, startTrackingWorld, trackedSender, type TrackingWorld } from './helpers/tracking.ts';
import { oneClick, tokenOf, unsubscribeUrl } from './helpers/topic-sends.ts';
import { arf, startReportMx, type ReportMx } from './helpers/bounce-world.ts';
import { processReceived } from '../inbound/receive/job.ts';

let world: TrackingWorld;
let mx: ReportMx;
test.before(async () => {
  world = await startTrackingWorld();
  mx = await startReportMx(world.w);
});
test.after.always(async () => {
  await mx?.close();
  await world?.close();
});

const SCANNER = 'Barracuda Sentinel (EE)';

test('clicked links count people only (clicks and unique clicks); unsubscribed lists who used their own link', async (t) => {
  const { w, listener } = world;
  w.mx('rep-inbox.test');
  const sender = await trackedSender(w, 'rep-news.test');
  const segment = await created(w, sender.team, '/segments', { name: 'Readers' });
  const people = ['ann', 'bob', 'cy', 'dee'].map((n) => `${n}@rep-inbox.test`);
  for (const email of people) await created(w, sender.team, '/contacts', { email, audience_id: segment });

  const id = await created(w, sender.team, '/broadcasts', {
    segment_id: segment,
    from: `News <news@${sender.domain.name}>`,
    subject: 'June',
    html: '<p><a href="https://rep-news.test/a">A</a> <a href="https://rep-news.test/b">B</a></p><p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Leave</a></p>',
    send: true,
  });
  const run = await fanOutAndDeliver(w, id);
  t.is(run.outcome, 'sent');
  t.is(run.emails.length, 4);
  const copies = new Map<string, { links: string[]; raw: Buffer }>();
  for (const address of people) {
    const [copy] = w.sink.deliveredTo(address);
    const { hrefs } = await htmlOf(copy.raw);
    t.true(hrefs[0].includes('/c/') && hrefs[1].includes('/c/'), hrefs.join(' '));
    copies.set(address, { links: hrefs, raw: copy.raw });
  }
  const [ann, bob, cy, dee] = people.map((p) => copies.get(p)!);

  // Ann clicks A twice and B once, Bob clicks A; Cy's mail scanner fetches both, and a link checker HEADs B.
  for (const url of [ann.links[0], ann.links[0], ann.links[1], bob.links[0]])
    t.is((await listener.hit(url)).status, 302);
  for (const url of cy.links.slice(0, 2)) await listener.hit(url, { userAgent: SCANNER });
  await listener.hit(dee.links[1], { method: 'HEAD' });
  await listener.recorder.flush();
  const machines = await w.p
    .db('email_engagements')
    .whereIn('email_id', run.emails)
    .whereNotNull('machine')
    .select('machine');
  t.deepEqual(machines.map((m) => m.machine).sort(), ['bot_user_agent', 'bot_user_agent', 'head_request']);

  const links = await w.p.request('GET', `/broadcasts/${id}/clicked-links`, { key: sender.team.key });
  t.is(links.status, 200, links.text);
  const byUrl = Object.fromEntries(
    links.body.data.map((l: { url: string; clicks: number; unique_clicks: number }) => [l.url, l]),
  );
  t.like(byUrl['https://rep-news.test/a'], { clicks: 3, unique_clicks: 2 });
  t.like(byUrl['https://rep-news.test/b'], { clicks: 1, unique_clicks: 1 });
  t.is(links.body.data.length, 2);

  const report = async (type: string) =>
    (await w.p.request('GET', `/broadcasts/${id}/recipients?type=${type}`, { key: sender.team.key })).body.data.map(
      (r: { email: string; count?: number }) => `${r.email}${r.count ? `:${r.count}` : ''}`,
    );
  t.deepEqual((await report('clicked')).sort(), ['ann@rep-inbox.test:3', 'bob@rep-inbox.test:1']);
  const counts = (await w.p.request('GET', `/broadcasts/${id}`, { key: sender.team.key })).body.counts;
  t.is(counts.clicked, 2, 'the scanner is no clicker');

  // Unsubscribes: Bob's one-click (posted twice), Cy's page form; Dee through the contacts API, not the link.
  t.deepEqual(await report('unsubscribed'), []);
  for (let i = 0; i < 2; i++) t.is((await oneClick(w, tokenOf(unsubscribeUrl(bob.raw)!))).status, 200);
  const form = await w.p.request('POST', `/unsubscribe/${tokenOf(unsubscribeUrl(cy.raw)!)}/all`, {
    rawBody: '',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.is(form.status, 200, form.text.slice(0, 200));
  const dee_ = await w.p.request('PATCH', `/contacts/dee@rep-inbox.test`, {
    key: sender.team.key,
    body: { unsubscribed: true },
  });
  t.is(dee_.status, 200, dee_.text);
  t.deepEqual((await report('unsubscribed')).sort(), ['bob@rep-inbox.test', 'cy@rep-inbox.test']);
  const bobOnly = await w.p.request('GET', `/broadcasts/${id}/recipients?type=unsubscribed&email=BOB@rep-inbox.test`, {
    key: sender.team.key,
  });
  t.deepEqual(
    bobOnly.body.data.map((r: { email: string }) => r.email),
    ['bob@rep-inbox.test'],
  );
});

test('opened, bounced (by bounce_type) and complained list the copies that really were opened, bounced and reported', async (t) => {
  const { w, listener } = world;
  w.mx('rep2-inbox.test');
  const sender = await trackedSender(w, 'rep2-news.test');
  const segment = await created(w, sender.team, '/segments', { name: 'Readers' });
  const [ann, bob, cy, gone, full] = ['ann', 'bob', 'cy', 'gone', 'full'].map((n) => `${n}@rep2-inbox.test`);
  for (const email of [ann, bob, cy, gone, full])
    await created(w, sender.team, '/contacts', { email, audience_id: segment });
  // The recipients' MX refuses two of them at RCPT: one address does not exist, one mailbox is full.
  w.sink.script(gone, { rcpt: '550 5.1.1 <gone@rep2-inbox.test>: Recipient address rejected: User unknown' });
  w.sink.script(full, { rcpt: '552 5.2.2 <full@rep2-inbox.test>: Mailbox full' });

  const id = await created(w, sender.team, '/broadcasts', {
    segment_id: segment,
    from: `News <news@${sender.domain.name}>`,
    subject: 'July',
    html: '<p>July news</p><p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Leave</a></p>',
    send: true,
  });
  const run = await fanOutAndDeliver(w, id);
  t.is(run.outcome, 'sent');
  t.is(run.emails.length, 5);
  const copyOf = (address: string) => {
    const copies = w.sink.deliveredTo(address);
    t.is(copies.length, 1, address);
    return copies[0];
  };
  const pixelOf = async (address: string) => {
    const { images } = await htmlOf(copyOf(address).raw);
    const pixel = images.find((src) => src.includes('/o/'));
    t.truthy(pixel, `${address}: an open pixel`);
    return pixel!;
  };

  // Ann's client loads the pixel twice; Bob's copy is fetched by a scanner only (a machine's open, counted nowhere).
  const annPixel = await pixelOf(ann);
  for (let i = 0; i < 2; i++) t.is((await listener.hit(annPixel)).status, 200);
  await listener.hit(await pixelOf(bob), { userAgent: SCANNER });
  await listener.recorder.flush();
  const opens = await w.p
    .db('email_engagements as g')
    .join('email_recipients as r', 'r.id', 'g.recipient_id')
    .whereIn('g.email_id', run.emails)
    .where('g.kind', 'open')
    .select('r.address', 'g.machine');
  t.deepEqual(
    opens.map((o) => `${o.address} ${o.machine}`).sort(),
    [`${ann} null`, `${ann} null`, `${bob} bot_user_agent`],
    'every hit recorded, the scanner flagged',
  );

  // Cy's provider reports his copy as spam: an RFC 5965 report to our MX, at the copy's own return path.
  const stored = await mx.report(copyOf(cy).from, arf({ rcpt: cy, to: cy }), 'fbl@isp.example');
  t.is(await processReceived(mx.deps, stored), 'processed');

  const report = async (query: string) => {
    const res = await w.p.request('GET', `/broadcasts/${id}/recipients?${query}`, { key: sender.team.key });
    t.is(res.status, 200, res.text);
    return res.body.data as { email: string; count?: number | null; bounce_type?: string | null }[];
  };
  t.deepEqual(
    (await report('type=opened')).map((r) => [r.email, r.count]),
    [[ann, 2]],
    "the scanner's open of Bob's copy is no open",
  );
  t.deepEqual(
    (await report('type=complained')).map((r) => r.email),
    [cy],
  );
  t.deepEqual((await report('type=bounced')).map((r) => [r.email, r.bounce_type]).sort(), [
    [full, 'transient'],
    [gone, 'permanent'],
  ]);
  t.deepEqual(
    (await report('type=bounced&bounce_type=permanent')).map((r) => r.email),
    [gone],
  );
  t.deepEqual(
    (await report('type=bounced&bounce_type=transient')).map((r) => r.email),
    [full],
  );
  t.deepEqual(await report('type=bounced&bounce_type=undetermined'), []);
  t.deepEqual(
    (await report(`type=bounced&email=${encodeURIComponent(gone.toUpperCase())}`)).map((r) => r.email),
    [gone],
  );
  t.deepEqual((await report('type=delivered')).map((r) => r.email).sort(), [ann, bob, cy]);

  const counts = (await w.p.request('GET', `/broadcasts/${id}`, { key: sender.team.key })).body.counts;
  t.like(counts, { recipients: 5, delivered: 3, bounced: 2, complained: 1, opened: 1 });
});
