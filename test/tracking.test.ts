// Open and click tracking end to end: a send through the api, the real delivery stages to a loopback MX (each
// recipient's copy its own, DKIM-signed), the delivered MIME parsed, its pixel and links followed over HTTP against
// the api's tracking listener; then the engagement rows, the events, the webhooks a customer receives (signed, once
// per recipient), the email's last_event and GET /emails/metrics (the api, and the resend SDK).
import test, { type ExecutionContext } from 'ava';
import { Resend } from 'resend';
import { processDelivery } from '../mta/delivery/job.ts';
import { composeMessage } from '../mta/delivery/compose.ts';
import { trackedCopies } from '../mta/delivery/track.ts';
import { fanOutSettled } from '../shared/webhooks/fanout.ts';
import { deliverDue } from '../shared/webhooks/deliver.ts';
import { rollUpSettled } from '../shared/email-metrics/rollup.ts';
import { secretsKey } from '../shared/secrets.ts';
import { unsubscribeToken } from '../shared/emails/mail-tokens.ts';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.ts';
import { verifyAsCustomers } from './helpers/webhook-world.ts';
import { until } from './helpers/wait.ts';
import { BROWSER, htmlOf, startTrackingWorld, trackedSender, type TrackingWorld } from './helpers/tracking.ts';
import { createTopic, oneClick, tokenOf, unsubscribeUrl } from './helpers/topic-sends.ts';
import { startSubmission } from './helpers/submission.ts';
import nodemailer from 'nodemailer';

let world: TrackingWorld;
let receiver: Receiver;
test.before(async () => {
  world = await startTrackingWorld();
  receiver = await startReceiver();
});
test.after.always(async () => {
  await receiver?.close();
  await world?.close();
});

const KEPT = [
  'javascript:alert(1)',
  'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
  'mailto:help@shop.test',
  '/relative',
  'https://shop.example.test/unsubscribe?u=1',
  'https://shop.example.test/prefs',
  '{{{RESEND_UNSUBSCRIBE_URL}}}',
];
/** KEPT as a recipient's copy has it: Resend's placeholder filled with the recipient's own link (never tracked). */
const keptFor = (recipientId: string) => [
  ...KEPT.slice(0, 6),
  `${world.w.deps.config.PUBLIC_BASE_URL}/unsubscribe/${unsubscribeToken(world.w.deps.secrets, recipientId)}`,
];
const HTML = `<html><body><h1>Sale</h1>
<p><a href="https://shop.example.test/a?x=1&amp;y=2">Shop now</a> or <a href="http://blog.example.test/post">read</a>.</p>
<p>${KEPT.slice(0, 4)
  .map((h, i) => `<a href="${h}">kept ${i}</a>`)
  .join(' ')}</p>
<p><a href="${KEPT[4]}">Unsubscribe</a> · <a href="${KEPT[5]}">Manage preferences</a> · <a href="${KEPT[6]}">leave</a></p>
</body></html>`;

const run = async () => {
  await world.listener.recorder.flush();
  await fanOutSettled(world.w.p.db);
  await deliverDue({
    db: world.w.p.db,
    secrets: secretsKey(world.w.p.config),
    resolver: world.w.p.deps.dns,
    allowPrivate: true,
  });
};

/** Each recipient's delivered copy of `id`, checked: its own transaction, its links on `base`, the rest kept. */
async function eachCopy(t: ExecutionContext, id: string, base: string) {
  const { w } = world;
  const recipients = await w.p.db('email_recipients').where({ email_id: id });
  const copies = new Map<string, Awaited<ReturnType<typeof htmlOf>>>();
  for (const r of recipients) {
    const mine = w.sink.deliveredTo(r.address);
    t.is(mine.length, 1, r.address);
    t.deepEqual(mine[0].to, [r.address], 'a transaction of its own: its links name one recipient');
    t.is(r.status, 'delivered');
    const copy = await htmlOf(mine[0].raw);
    t.is(copy.text.trim(), 'Sale at https://shop.example.test/a', 'the text part is left as it is');
    t.true(copy.hrefs[0].startsWith(`${base}/c/`) && copy.hrefs[1].startsWith(`${base}/c/`), copy.hrefs.join(' '));
    t.deepEqual(
      copy.hrefs.slice(2),
      keptFor(r.id),
      'other schemes, unsubscribe and preference links are never rewritten',
    );
    t.is(copy.images.length, 1);
    t.true(copy.images[0].startsWith(`${base}/o/`));
    copies.set(r.address, copy);
  }
  return copies;
}

/** The metrics of the email of the first test, through the api and the SDK, once the rollup has run. */
async function countedIn(t: ExecutionContext, key: string, id: string) {
  const { w } = world;
  await rollUpSettled(w.p.db);
  const metrics = [
    'sent',
    'delivered',
    'opened',
    'clicked',
    'unique_opened',
    'unique_clicked',
    'open_rate',
    'click_rate',
  ] as const;
  const res = await w.p.request('GET', `/emails/metrics?email_id=${id}&metrics=${metrics.join(',')}`, {
    key,
  });
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body.totals, {
    sent: 3,
    delivered: 3,
    opened: 3,
    clicked: 4,
    unique_opened: 2,
    unique_clicked: 1,
    open_rate: 0.6667,
    click_rate: 0.3333,
  });
  const resend = new Resend(key, { baseUrl: w.p.url } as never);
  const sdk = await resend.emails.metrics({ emailId: [id], metrics: ['opened', 'clicked'], dimensions: ['email'] });
  t.is(sdk.error, null, JSON.stringify(sdk.error));
  t.like(sdk.data, { object: 'metrics', totals: { opened: 3, clicked: 4 }, dimensions: ['email'] });
  t.deepEqual(sdk.data!.data, [{ email_id: id, opened: 3, clicked: 4 }]);
}

test('a tracked send: each copy its own pixel and links; following them records, fires each first once, and counts', async (t) => {
  const { w, listener } = world;
  w.mx('track-inbox.test');
  w.mx('track-other.test');
  const sender = await trackedSender(w, 'track-shop.test');
  const hook = await w.p.request('POST', '/webhooks', {
    key: sender.team.key,
    body: { endpoint: receiver.url, events: ['email.opened', 'email.clicked'] },
  });
  t.is(hook.status, 201, hook.text);

  const id = await sender.send({
    to: ['ann@track-inbox.test', 'bob@track-inbox.test'],
    cc: 'cy@track-other.test',
    subject: 'Sale',
    html: HTML,
    text: 'Sale at https://shop.example.test/a',
  });
  await processDelivery(w.deps, id);
  const copies = await eachCopy(t, id, `http://${sender.trackingHost}:${listener.port}`);
  const ann = copies.get('ann@track-inbox.test')!;
  const bob = copies.get('bob@track-inbox.test')!;

  // Ann opens (the pixel), clicks the first link twice; Bob opens; Apple's proxy and a HEAD request come too.
  const pixel = await listener.hit(ann.images[0]);
  t.is(pixel.status, 200);
  t.is(pixel.headers['content-type'], 'image/gif');
  t.regex(String(pixel.headers['cache-control']), /no-store/);
  for (let i = 0; i < 2; i++) {
    const click = await listener.hit(ann.hrefs[0]);
    t.is(click.status, 302);
    t.is(click.headers.location, 'https://shop.example.test/a?x=1&y=2', 'the link as the browser would have read it');
  }
  t.is((await listener.hit(ann.hrefs[1])).headers.location, 'http://blog.example.test/post');
  t.is((await listener.hit(bob.images[0])).status, 200);
  t.is((await listener.hit(bob.images[0], { userAgent: 'Mozilla/5.0' })).status, 200, 'the MPP proxy');
  const head = await listener.hit(bob.hrefs[0], { method: 'HEAD' });
  t.is(head.status, 302);
  t.is(head.text, '');
  await run();

  const rows = await w.p.db('email_engagements').where({ email_id: id }).orderBy('created_at');
  t.is(rows.length, 7);
  t.deepEqual(
    rows.map((r) => [r.kind, r.machine]),
    [
      ['open', null],
      ['click', null],
      ['click', null],
      ['click', null],
      ['open', null],
      ['open', 'apple_privacy_proxy'],
      ['click', 'head_request'],
    ],
  );
  t.like(rows[1], { link: 'https://shop.example.test/a?x=1&y=2', link_index: 0, user_agent: BROWSER, ip: '127.0.0.0' });

  // The webhooks: ann opened, ann clicked (her first click), bob opened. Nothing for the machines or the repeats.
  await until(() => receiver.received.length >= 3, { what: 'three webhooks' });
  const bodies = receiver.received.map((r) => JSON.parse(r.body));
  t.deepEqual(bodies.map((b) => [b.type, b.data.to[0]]).sort(), [
    ['email.clicked', 'ann@track-inbox.test'],
    ['email.opened', 'ann@track-inbox.test'],
    ['email.opened', 'bob@track-inbox.test'],
  ]);
  for (const r of receiver.received) verifyAsCustomers(t, hook.body.signing_secret, r);
  const clicked = bodies.find((b) => b.type === 'email.clicked');
  t.like(clicked.data, {
    email_id: id,
    subject: 'Sale',
    click: { link: 'https://shop.example.test/a?x=1&y=2', ipAddress: '127.0.0.0', userAgent: BROWSER },
  });
  t.regex(clicked.data.click.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.is((await w.p.request('GET', `/emails/${id}`, { key: sender.team.key })).body.last_event, 'clicked');
  // What segment filters read of the addresses (noteActivity): people's opens and clicks only.
  const activity = await w.p.db('contact_activity').where({ team_id: sender.team.id }).orderBy('address');
  t.deepEqual(
    activity.map((a) => [a.address, !!a.last_opened_at, !!a.last_clicked_at]),
    [
      ['ann@track-inbox.test', true, true],
      ['bob@track-inbox.test', true, false],
      ['cy@track-other.test', false, false],
    ],
  );

  // Opening and clicking again fires nothing more.
  await listener.hit(ann.images[0]);
  await listener.hit(ann.hrefs[1]);
  await run();
  t.is(receiver.received.length, 3);

  await countedIn(t, sender.team.key, id);
});

test('a topic send with tracking: the List-Unsubscribe header and the one-click link are never rewritten', async (t) => {
  const { w } = world;
  w.mx('track-topic.test');
  const sender = await trackedSender(w, 'track-news.test');
  const topic = await createTopic(w, sender.team, { name: 'News', default_subscription: 'opt_in' });
  // A topic send is a campaign: its pre-send checks refuse the javascript: and data: links this HTML keeps on purpose.
  const id = await sender.send({
    to: 'ann@track-topic.test',
    subject: 'News',
    html: HTML,
    topic_id: topic,
    acknowledge_checks: true,
  });
  await processDelivery(w.deps, id);
  const [copy] = w.sink.deliveredTo('ann@track-topic.test');
  const raw = copy.raw.toString().replace(/\r\n[ \t]+/g, ' ');
  t.regex(
    raw,
    new RegExp(
      `^List-Unsubscribe: <${w.p.config.PUBLIC_BASE_URL.replace(/[.:/]/g, '\\$&')}/unsubscribe/[A-Za-z0-9_-]{43}>\\r$`,
      'm',
    ),
  );
  const parsed = await htmlOf(copy.raw);
  // The placeholder is filled with the same one-click URL the header carries.
  t.deepEqual(parsed.hrefs.slice(2), [...KEPT.slice(0, 6), unsubscribeUrl(copy.raw)]);
  t.is(parsed.images.length, 1);
  // The one-click link unsubscribes as ever, and counts once in the email's metrics however often it is posted.
  const token = tokenOf(unsubscribeUrl(copy.raw)!);
  for (let i = 0; i < 2; i++) t.is((await oneClick(w, token)).status, 200);
  const res = await w.p.request('GET', `/emails/metrics?email_id=${id}&metrics=unsubscribed,unsubscribe_rate`, {
    key: sender.team.key,
  });
  t.deepEqual(
    res.body.totals,
    { unsubscribed: 1, unsubscribe_rate: 0 },
    'no delivery counted yet: the rollup has not run',
  );
  await rollUpSettled(w.p.db);
  const after = await w.p.request('GET', `/emails/metrics?email_id=${id}&metrics=unsubscribed,unsubscribe_rate`, {
    key: sender.team.key,
  });
  t.deepEqual(after.body.totals, { unsubscribed: 1, unsubscribe_rate: 1 });
});

test('open tracking alone adds the pixel; click tracking alone rewrites the links; a text-only send is left as it is', async (t) => {
  const { w } = world;
  w.mx('track-flags.test');
  const opens = await trackedSender(w, 'track-opens.test', { open_tracking: true, click_tracking: false });
  const clicks = await trackedSender(w, 'track-clicks.test', { open_tracking: false, click_tracking: true });
  for (const [s, pixel, links] of [
    [opens, 1, false],
    [clicks, 0, true],
  ] as const) {
    const to = `${s.domain.name.split('.')[0]}@track-flags.test`;
    await processDelivery(w.deps, await s.send({ to, subject: 'Flags', html: HTML }));
    const copy = await htmlOf(w.sink.deliveredTo(to)[0].raw);
    t.is(copy.images.length, pixel, to);
    t.is(copy.hrefs[0].includes('/c/'), links, to);
  }
  // Text only: nothing to track, so both recipients share one transaction, as without tracking.
  const id = await opens.send({
    to: ['t1@track-flags.test', 't2@track-flags.test'],
    subject: 'Text',
    text: 'https://x.test/',
  });
  await processDelivery(w.deps, id);
  const [one] = w.sink.deliveredTo('t1@track-flags.test');
  t.deepEqual(one.to, ['t1@track-flags.test', 't2@track-flags.test']);
  t.false(one.raw.toString().includes('/o/'));
});

test('a message submitted over SMTP is tracked too (its base64 HTML part); a retry tracks the stored message again', async (t) => {
  const { w, listener } = world;
  w.mx('track-smtp.test');
  const sender = await trackedSender(w, 'track-submit.test');
  const submission = await startSubmission(w.p.deps, { implicitTls: false });
  t.teardown(() => submission.close());
  w.sink.script('late@track-smtp.test', { rcpt: '450 4.2.1 Mailbox busy, try later' });
  const info = await nodemailer
    .createTransport({
      host: '127.0.0.1',
      port: submission.port,
      requireTLS: true,
      tls: { rejectUnauthorized: false },
      auth: { user: 'apikey', pass: sender.team.key },
    })
    .sendMail({
      from: `Shop <shop@${sender.domain.name}>`,
      to: ['now@track-smtp.test', 'late@track-smtp.test'],
      subject: 'Over SMTP',
      text: 'See https://shop.example.test/smtp',
      html: '<p>Grüße: <a href="https://shop.example.test/smtp">shop</a></p>',
      textEncoding: 'base64',
    });
  const id = /queued as (\S+)/.exec(info.response)![1];
  await processDelivery(w.deps, id);
  const [now] = w.sink.deliveredTo('now@track-smtp.test');
  t.regex(now.raw.toString(), /Content-Transfer-Encoding: base64/);
  const copy = await htmlOf(now.raw);
  t.true(copy.html.startsWith('<p>Grüße: <a href="http://links.track-submit.test:'), copy.html);
  t.is((await listener.hit(copy.hrefs[0])).headers.location, 'https://shop.example.test/smtp');
  t.is(copy.images.length, 1);

  // The deferred recipient: its retry sends the stored message, tracked the same way for it.
  w.sink.script('late@track-smtp.test', {});
  const late = await w.p.db('email_recipients').where({ email_id: id, address: 'late@track-smtp.test' }).first();
  await processDelivery(w.deps, id, new Date(late.next_attempt_at.getTime() + 1000));
  const retried = await htmlOf(w.sink.deliveredTo('late@track-smtp.test')[0].raw);
  t.not(retried.hrefs[0], copy.hrefs[0], 'its own link');
  t.is((await listener.hit(retried.hrefs[0])).headers.location, 'https://shop.example.test/smtp');
  await listener.recorder.flush();
  const rows = await w.p.db('email_engagements').where({ email_id: id }).orderBy('created_at');
  t.deepEqual(
    rows.map((r) => r.recipient_id),
    [(await w.p.db('email_recipients').where({ email_id: id, address: 'now@track-smtp.test' }).first()).id, late.id],
  );
});

test('one recipient of a composed message: composed with its tracked HTML, as the split path tracks it; a deferral stores the message as written', async (t) => {
  const { w, listener } = world;
  w.mx('track-once.test');
  const sender = await trackedSender(w, 'track-compose.test');
  const id = await sender.send({ to: 'one@track-once.test', subject: 'Once', html: HTML, text: 'Sale' });
  await processDelivery(w.deps, id);
  const [one] = w.sink.deliveredTo('one@track-once.test');
  const copy = await htmlOf(one.raw);
  // The other way, which a stored message takes: the message composed as written, split, tracked for the recipient.
  const email = await w.p.db('emails').where({ id }).first();
  const recipient = await w.p.db('email_recipients').where({ email_id: id }).first();
  const sending = (await w.deps.domains.get(sender.domain.id))!;
  const split = (await trackedCopies(
    w.deps,
    sender.domain.id,
    sending.tracking,
    await composeMessage(w.deps, w.p.db, email),
  ))!;
  const other = await htmlOf(split.copyFor(recipient.id));
  // The placeholder is filled afterwards, either way (unsubscribe-url.ts).
  const filled = other.html.replace('{{{RESEND_UNSUBSCRIBE_URL}}}', keptFor(recipient.id)[6]);
  t.is(copy.html.replace(/\r\n/g, '\n'), filled.replace(/\r\n/g, '\n'), 'the same HTML either way');
  t.true(copy.hrefs[0].startsWith(`http://${sender.trackingHost}:`), copy.hrefs[0]);
  t.deepEqual(copy.hrefs.slice(2), keptFor(recipient.id));
  t.is((await listener.hit(copy.hrefs[0])).headers.location, 'https://shop.example.test/a?x=1&y=2');

  // Deferred: what is stored for the retry is the message as written, which the retry tracks for the recipient.
  w.sink.script('later@track-once.test', { rcpt: '450 4.2.1 Mailbox busy, try later' });
  const later = await sender.send({ to: 'later@track-once.test', subject: 'Later', html: HTML });
  await processDelivery(w.deps, later);
  const stored = await w.p.db('emails').where({ id: later }).first();
  const kept = await htmlOf((await w.deps.blobs.get(stored.raw_blob_key))!);
  t.is(kept.hrefs[0], 'https://shop.example.test/a?x=1&amp;y=2', 'no tracked link in the stored message');
  t.is(kept.images.length, 0);
  w.sink.script('later@track-once.test', {});
  const due = await w.p.db('email_recipients').where({ email_id: later }).first();
  await processDelivery(w.deps, later, new Date(due.next_attempt_at.getTime() + 1000));
  const retried = await htmlOf(w.sink.deliveredTo('later@track-once.test')[0].raw);
  t.is((await listener.hit(retried.hrefs[0])).headers.location, 'https://shop.example.test/a?x=1&y=2');
  t.is(retried.images.length, 1);
});
