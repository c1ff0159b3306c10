// Broadcasts end to end in one process: the API's lifecycle, the worker's fan-out (run here as the worker runs it)
// and the mta's deliver job to a loopback SMTP sink; every delivered copy DKIM-verified by the world on close.
import test, { type ExecutionContext } from 'ava';
import type { Knex } from 'knex';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { audience, created, fanOutAndDeliver, fanoutDeps, type Audience } from './helpers/broadcasts.ts';
import { until } from './helpers/wait.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { runBroadcast } from '../shared/broadcasts/fanout.ts';
import { oneClick, tokenOf, unsubscribeUrl } from './helpers/topic-sends.ts';
import { readUnsubscribeToken } from '../shared/emails/mail-tokens.ts';
import { newId } from '../shared/ids.ts';
import { simpleParser } from 'mailparser';
import { rollUpSettled } from '../shared/email-metrics/rollup.ts';

let w: MtaWorld;
test.before(async () => {
  w = await startMtaWorld();
});
test.after.always(async () => {
  await w?.close();
});

const html =
  '<p>Hi {{{FIRST_NAME|there}}} at {{{company}}}, {{{ nickname | friend }}}</p><p><a href="https://example.com/x">Read</a> <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>';

test('a broadcast reaches each member once with its merge values and its own one-click unsubscribe; status and counts follow', async (t) => {
  w.mx('bc-inbox.test');
  const a = await audience(w, 'bc-news.test', []);
  await created(w, a.team, '/contact-properties', { key: 'company', type: 'string', fallback_value: 'your company' });
  const contacts: [string, Record<string, unknown>][] = [
    ['ann@bc-inbox.test', { first_name: 'Ann', properties: { company: 'Acme <&>' } }],
    ['Bob@bc-inbox.test', {}],
    ['cy@bc-inbox.test', { unsubscribed: true }],
    ['dan@bc-inbox.test', {}],
  ];
  for (const [email, extra] of contacts)
    await created(w, a.team, '/contacts', { email, ...extra, audience_id: a.segment });
  await w.p
    .db('suppressions')
    .insert({ id: newId(), team_id: a.team.id, email: 'dan@bc-inbox.test', origin: 'manual' });

  const id = await created(w, a.team, '/broadcasts', {
    name: 'June',
    segment_id: a.segment,
    from: a.from,
    subject: 'News for {{{FIRST_NAME|you}}}',
    html,
    text: 'Hi {{{FIRST_NAME|there}}}. Leave: {{{RESEND_UNSUBSCRIBE_URL}}}',
    preview_text: 'What happened in June',
  });
  const draft = await w.p.request('GET', `/broadcasts/${id}`, { key: a.team.key });
  t.like(draft.body, { object: 'broadcast', id, status: 'draft', segment_id: a.segment, audience_id: a.segment });
  const listed = await w.p.request('GET', '/broadcasts', { key: a.team.key });
  t.deepEqual(
    listed.body.data.map((b: { id: string }) => b.id),
    [id],
  );

  const sent = await w.p.request('POST', `/broadcasts/${id}/send`, { key: a.team.key, body: {} });
  t.is(sent.status, 200, sent.text);
  t.is((await w.p.request('GET', `/broadcasts/${id}`, { key: a.team.key })).body.status, 'queued');
  const again = await w.p.request('POST', `/broadcasts/${id}/send`, { key: a.team.key, body: {} });
  t.is(again.status, 422);
  t.regex(again.body.message, /queued/);

  const run = await fanOutAndDeliver(w, id);
  t.is(run.outcome, 'sent');
  t.is(run.emails.length, 2, 'ann and bob: cy unsubscribed from everything, dan suppressed');

  const ann = w.sink.deliveredTo('ann@bc-inbox.test');
  const bob = w.sink.deliveredTo('bob@bc-inbox.test');
  t.is(ann.length, 1);
  t.is(bob.length, 1);
  t.is(w.sink.deliveredTo('cy@bc-inbox.test').length + w.sink.deliveredTo('dan@bc-inbox.test').length, 0);
  const annMail = await simpleParser(ann[0].raw);
  t.is(annMail.subject, 'News for Ann');
  t.regex(String(annMail.html), /Hi Ann at Acme &lt;&amp;&gt;, friend/, 'values are HTML-escaped');
  t.regex(String(annMail.html), /display:none[^>]*>What happened in June</);
  const bobMail = await simpleParser(bob[0].raw);
  t.is(bobMail.subject, 'News for you');
  t.regex(String(bobMail.html), /Hi there at your company, friend/);

  const recipients = await w.p.db('email_recipients').whereIn('email_id', run.emails);
  for (const [copy, address] of [
    [ann[0], 'ann@bc-inbox.test'],
    [bob[0], 'bob@bc-inbox.test'],
  ] as const) {
    const url = unsubscribeUrl(copy.raw) ?? '';
    const recipient = recipients.find((r) => r.address.toLowerCase() === address)!;
    t.is(readUnsubscribeToken(w.deps.secrets, tokenOf(url)), recipient.id, address);
    const mail = await simpleParser(copy.raw);
    t.true(mail.text?.includes(`Leave: ${url}`), 'the text part carries the same link');
    t.true(String(mail.html).includes(`href="${url}"`), 'and the html part');
    t.deepEqual(
      (await w.verifyDkim(copy.raw)).map((d) => d.status),
      ['pass'],
    );
  }

  const after = await w.p.request('GET', `/broadcasts/${id}`, { key: a.team.key });
  t.like(after.body, { status: 'sent', counts: { recipients: 2, suppressed: 1, delivered: 2, bounced: 0 } });
  t.truthy(after.body.sent_at);

  const report = async (type: string) =>
    (await w.p.request('GET', `/broadcasts/${id}/recipients?type=${type}`, { key: a.team.key })).body.data.map(
      (r: { email: string }) => r.email,
    );
  t.deepEqual((await report('sent')).sort(), ['ann@bc-inbox.test', 'bob@bc-inbox.test']);
  t.deepEqual((await report('delivered')).sort(), ['ann@bc-inbox.test', 'bob@bc-inbox.test']);
  t.deepEqual(await report('suppressed'), ['dan@bc-inbox.test']);
  t.deepEqual(await report('bounced'), []);

  // Bob's provider posts the one-click: a broadcast without a topic unsubscribes him from everything.
  const res = await oneClick(w, tokenOf(unsubscribeUrl(bob[0].raw)!));
  t.is(res.status, 200);
  t.true((await w.p.db('contacts').where({ team_id: a.team.id, email: 'Bob@bc-inbox.test' }).first()).unsubscribed);
  t.deepEqual(await report('unsubscribed'), ['bob@bc-inbox.test']);

  // GET /emails/metrics by the broadcast: its sent, delivered and unsubscribed copies, none of another send's.
  await rollUpSettled(w.p.db);
  const day = new Date().toISOString().slice(0, 10);
  const metrics = await w.p.request(
    'GET',
    `/emails/metrics?start_date=${day}&end_date=${day}&dimensions=broadcast&broadcast_id=${id}&metrics=sent,delivered,unsubscribed`,
    { key: a.team.key },
  );
  t.is(metrics.status, 200, metrics.text);
  t.like(metrics.body.totals, { sent: 2, delivered: 2, unsubscribed: 1 });
  t.is(metrics.body.data[0].broadcast_id, id);

  const wrong = await w.p.request('GET', `/broadcasts/${id}/recipients?type=opened&bounce_type=permanent`, {
    key: a.team.key,
  });
  t.is(wrong.status, 422);
});

test('a topic narrows the audience to its subscribers; the one-click opts out of the topic only', async (t) => {
  w.mx('bct-inbox.test');
  const a = await audience(w, 'bct-news.test', []);
  const topic = await created(w, a.team, '/topics', { name: 'Deals', default_subscription: 'opt_out' });
  await created(w, a.team, '/contacts', {
    email: 'in@bct-inbox.test',
    audience_id: a.segment,
    topics: [{ id: topic, subscription: 'opt_in' }],
  });
  await created(w, a.team, '/contacts', { email: 'default@bct-inbox.test', audience_id: a.segment });
  const id = await created(w, a.team, '/broadcasts', {
    segment_id: a.segment,
    topic_id: topic,
    from: a.from,
    subject: 'Deals',
    html: '<p>Deals</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>',
    send: true,
  });
  t.is((await fanOutAndDeliver(w, id)).outcome, 'sent');
  const copies = w.sink.deliveredTo('in@bct-inbox.test');
  t.is(copies.length, 1);
  t.is(w.sink.deliveredTo('default@bct-inbox.test').length, 0, "the topic's default is opt_out");
  t.is((await oneClick(w, tokenOf(unsubscribeUrl(copies[0].raw)!))).status, 200);
  t.like(await w.p.db('topic_subscriptions').where({ topic_id: topic, email: 'in@bct-inbox.test' }).first(), {
    subscription: 'opt_out',
  });
  t.false((await w.p.db('contacts').where({ team_id: a.team.id, email: 'in@bct-inbox.test' }).first()).unsubscribed);
});

test('cancel while sending stops before the next batch: who got it is recorded, nobody else gets it', async (t) => {
  w.mx('bcc-inbox.test');
  const emails = ['a', 'b', 'c', 'd', 'e'].map((l) => ({ email: `${l}@bcc-inbox.test` }));
  const a = await audience(w, 'bcc-news.test', emails);
  const id = await created(w, a.team, '/broadcasts', {
    segment_id: a.segment,
    from: a.from,
    subject: 'Hello',
    html: '<p>Hi</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>',
    send: true,
  });
  let batches = 0;
  const run = await fanOutAndDeliver(w, id, {
    batchSize: 2,
    enqueue: async () => {
      // The cancel comes while the first batch's emails are being handed over.
      if (++batches === 1)
        t.is((await w.p.request('POST', `/broadcasts/${id}/cancel`, { key: a.team.key })).status, 200);
    },
  });
  t.is(run.outcome, 'canceled');
  const b = (await w.p.request('GET', `/broadcasts/${id}`, { key: a.team.key })).body;
  t.like(b, { status: 'canceled', counts: { recipients: 2 } });
  const listed = (await w.p.request('GET', `/broadcasts/${id}/recipients?type=sent`, { key: a.team.key })).body.data;
  t.is(listed.length, 2);
  t.is(
    await w.p
      .db('emails')
      .where({ broadcast_id: id })
      .count({ n: '*' })
      .first()
      .then((r) => Number(r?.n)),
    2,
  );
  const again = await w.p.request('POST', `/broadcasts/${id}/cancel`, { key: a.team.key });
  t.is(again.status, 422);
});

/** `db` whose transactions (the fan-out's batches) call `beforeCommit` once their work is done, before they commit. */
function withBeforeCommit(db: Knex, beforeCommit: (trx: Knex.Transaction) => Promise<void>): Knex {
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== 'transaction') return Reflect.get(target, prop, receiver);
      return (work: (trx: Knex.Transaction) => Promise<unknown>) =>
        target.transaction(async (trx) => {
          const result = await work(trx);
          await beforeCommit(trx);
          return result;
        });
    },
  });
}

interface RaceHooks {
  /** After batch `batch` committed, while its emails are handed over. */
  handed?: (batch: number, id: string) => Promise<void>;
  /** When batch `batch` has done its work and holds the row lock, before it commits. */
  beforeCommit?: (batch: number, id: string, trx: Knex.Transaction) => Promise<void>;
}

/**
 * A new broadcast to `a`'s segment, its fan-out run in batches of 2 with the hooks (5 members: the third batch is the
 * last and marks it sent), then what it handed over delivered; the id, the outcome and the emails handed over.
 */
async function race(a: Audience, hooks: RaceHooks) {
  const id = await created(w, a.team, '/broadcasts', {
    segment_id: a.segment,
    from: a.from,
    subject: 'Last call',
    html: '<p>Hi</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>',
    send: true,
  });
  const handed: string[] = [];
  let batches = 0;
  let commits = 0;
  const deps = fanoutDeps(w, {
    batchSize: 2,
    db: withBeforeCommit(w.p.db, async (trx) => hooks.beforeCommit?.(++commits, id, trx)),
    enqueue: async (ids) => {
      handed.push(...ids);
      await hooks.handed?.(++batches, id);
    },
  });
  const outcome = await runBroadcast(deps, id);
  for (const emailId of handed) await processDelivery(w.deps, emailId);
  return { id, outcome, handed };
}

/**
 * The broadcast's status, counts, recorded recipients, emails and the sink agree: each recorded member got one copy
 * more than `seen` (copies per member before this run), nobody else one; answers the recorded addresses.
 */
async function consistent(
  t: ExecutionContext,
  a: Audience,
  run: { id: string; handed: string[] },
  expected: { status: 'sent' | 'canceled'; reached: number },
  seen: Map<string, number>,
) {
  const b = (await w.p.request('GET', `/broadcasts/${run.id}`, { key: a.team.key })).body;
  const { status, reached } = expected;
  t.like(b, { status, counts: { recipients: reached, delivered: reached } }, status);
  t.is(b.canceled_at === null, status === 'sent', 'canceled_at only on a canceled one');
  t.is(b.sent_at === null, status === 'canceled', 'sent_at only on a sent one');
  const recorded: string[] = await w.p
    .db('broadcast_recipients')
    .where({ broadcast_id: run.id, status: 'sent' })
    .pluck('email');
  t.is(recorded.length, reached);
  const report = await w.p.request('GET', `/broadcasts/${run.id}/recipients?type=sent`, { key: a.team.key });
  t.deepEqual(report.body.data.map((r: { email: string }) => r.email).sort(), [...recorded].sort());
  const emails = await w.p.db('emails').where({ broadcast_id: run.id }).select('id', 'to');
  t.deepEqual(emails.map((e) => e.id).sort(), [...run.handed].sort(), 'every email written was handed over');
  t.deepEqual(emails.map((e) => e.to[0]).sort(), [...recorded].sort());
  for (const [m, before] of seen) {
    const now = w.sink.deliveredTo(m).length;
    t.is(now - before, recorded.includes(m) ? 1 : 0, `${m}: one copy if recorded, none otherwise`);
    seen.set(m, now);
  }
  return recorded;
}

/** Waits until a backend waits for a lock that the backend `pid` holds. */
const someoneWaitsFor = (pid: number, what: string) =>
  until(
    async () =>
      (await w.p.db.raw('select count(*)::int as n from pg_stat_activity where ? = any(pg_blocking_pids(pid))', [pid]))
        .rows[0].n > 0,
    { what },
  );

test('cancel racing the last batch (just before it, during its commit, after it): one consistent outcome, nobody mailed twice', async (t) => {
  w.mx('bcl-inbox.test');
  const members = ['a', 'b', 'c', 'd', 'e'].map((l) => `${l}@bcl-inbox.test`);
  const a = await audience(
    w,
    'bcl-news.test',
    members.map((email) => ({ email })),
  );
  const cancel = (id: string) => w.p.request('POST', `/broadcasts/${id}/cancel`, { key: a.team.key });
  const seen = new Map(members.map((m) => [m, 0]));

  // Just before: the cancel lands while the second batch is handed over; the last batch sees `canceled`, adds nobody.
  const before = await race(a, {
    handed: async (batch, id) => {
      if (batch === 2) t.is((await cancel(id)).status, 200);
    },
  });
  t.is(before.outcome, 'canceled');
  const firstFour = await consistent(t, a, before, { status: 'canceled', reached: 4 }, seen);
  t.is(members.filter((m) => !firstFour.includes(m)).length, 1, 'the last batch reached nobody');

  // During its commit: the last batch has written `sent` and holds the row lock; the cancel waits for the lock, then
  // finds `sent` and is refused with it.
  let waited: ReturnType<typeof cancel> | null = null;
  const during = await race(a, {
    beforeCommit: async (batch, id, trx) => {
      if ((await trx('broadcasts').where({ id }).first('status')).status !== 'sent') return;
      t.is(batch, 3, 'the third batch is the last');
      const { rows } = await trx.raw('select pg_backend_pid() as pid');
      waited = cancel(id);
      await someoneWaitsFor(rows[0].pid, "the cancel waiting for the last batch's row lock");
    },
  });
  t.is(during.outcome, 'sent');
  t.truthy(waited, 'a cancel was started during the last commit');
  const refused = await waited!;
  t.is(refused.status, 422);
  t.is(refused.body.details?.status, 'sent', 'refused with the status it found after the wait');
  t.regex(refused.body.message, /is sent/);
  await consistent(t, a, during, { status: 'sent', reached: 5 }, seen);

  // After: the last batch committed and its emails are being handed over.
  const after = await race(a, {
    handed: async (batch, id) => {
      if (batch !== 3) return;
      const res = await cancel(id);
      t.is(res.status, 422);
      t.is(res.body.details?.status, 'sent');
    },
  });
  t.is(after.outcome, 'sent');
  await consistent(t, a, after, { status: 'sent', reached: 5 }, seen);
});
