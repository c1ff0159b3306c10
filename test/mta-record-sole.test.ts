// The record of a lone one-recipient attempt is one statement (record.ts recordSole) instead of the transaction
// every other batch takes. Each outcome, recorded both ways for two identical emails, leaves the same rows: the
// recipient, the email's last_event and status (engagement another area recorded included), the attempt, the events.
import test from 'ava';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { eventsOf, insertEmail } from './helpers/emails.ts';
import { takeLease } from '../mta/delivery/lease.ts';
import { recordAttempts, type PendingRecord } from '../mta/delivery/record.ts';
import type { Outcome } from '../mta/delivery/types.ts';
import type { EmailRow } from '../shared/emails/present.ts';

let w: MtaWorld;
test.before(async () => {
  w = await startMtaWorld();
});
test.after.always(async () => {
  await w?.close();
});

const now = new Date('2026-11-23T12:00:00.000Z');

async function claimed(
  teamId: string,
  domain: { id: string; name: string },
  to: string[],
  lastEvent?: string,
): Promise<PendingRecord> {
  const id = await insertEmail(w.p.db, w.p.deps.blobs, { teamId, domain, to, subject: 'Same', text: 'same body', now });
  const c = (await takeLease(w.p.db, w.deps.log, id, now))!;
  c.lease.release();
  if (lastEvent) await w.p.db('emails').where({ id }).update({ last_event: lastEvent });
  const email: EmailRow = await w.p.db('emails').where({ id }).first();
  const token = await c.lease.use(async (t) => t);
  return {
    ctx: { email, now, lease: token },
    attempt: {
      domain: 'record-sole.test',
      mxHost: 'mx.record-sole.test',
      tls: true,
      transcript: 'S: 250 ok',
      startedAt: now,
      durationMs: 12,
      outcomes: [],
    },
  };
}

/** What a record left, without the ids and times that differ between two emails by construction. */
async function outcomeOf(record: PendingRecord) {
  const id = record.ctx.email.id;
  const r = await w.p.db('email_recipients').where({ email_id: id }).first();
  const e = await w.p.db('emails').where({ id }).first('last_event', 'status');
  const attempts = await w.p
    .db('delivery_attempts')
    .where({ email_id: id })
    .select('domain', 'recipients', 'mx_host', 'outcome', 'response', 'transcript', 'tls', 'duration_ms', 'started_at');
  const events = (await eventsOf(w.p.db, id)).map(({ type, data }) => {
    const { email_id: _id, created_at: _at, message_id: _mid, ...rest } = data;
    return { type, ...rest };
  });
  return {
    recipient: {
      status: r.status,
      last_response: r.last_response,
      enhanced_code: r.enhanced_code,
      next_attempt_at: r.next_attempt_at,
      first_deferred_at: r.first_deferred_at,
      delay_notified: r.delay_notified,
      delivered_at: r.delivered_at,
      bounce_type: r.bounce_type,
      bounce_sub_type: r.bounce_sub_type,
      attempts: r.attempts,
      leased_until: r.leased_until,
      mx_host: r.mx_host,
    },
    email: e,
    attempts,
    events,
  };
}

const base = { code: 250, enhanced: '2.0.0', response: '250 2.0.0 Ok', rule: 'test' };
const cases: [string, Outcome, string?][] = [
  ['delivered', { ...base, action: 'deliver' }],
  ['delivered under a click', { ...base, action: 'deliver' }, 'clicked'],
  ['deferred', { ...base, action: 'defer', code: 451, enhanced: '4.3.0', response: '451 4.3.0 Try later' }],
  [
    'deferred, the simulator notifying at once',
    { ...base, action: 'defer', code: 451, enhanced: '4.3.0', response: '451 4.3.0 Try later', simulated: true },
  ],
  [
    'bounced, transient',
    {
      ...base,
      action: 'bounce',
      code: 552,
      enhanced: '5.2.2',
      response: '552 5.2.2 Mailbox full',
      bounce: { type: 'Transient', subType: 'MailboxFull' },
    },
  ],
  [
    'bounced over an open',
    {
      ...base,
      action: 'bounce',
      code: 552,
      enhanced: '5.2.2',
      response: '552 5.2.2 Mailbox full',
      bounce: { type: 'Transient', subType: 'MailboxFull' },
    },
    'opened',
  ],
  [
    'failed',
    {
      ...base,
      action: 'fail',
      code: 554,
      enhanced: '5.7.0',
      response: '554 5.7.0 No domain',
      failReason: 'domain_not_found',
    },
  ],
  ['suppressed', { ...base, action: 'suppress', code: 550, enhanced: '5.1.1', response: '550 5.1.1 Suppressed' }],
];

for (const [name, outcome, lastEvent] of cases) {
  test(`${name}: one statement leaves what the transaction leaves`, async (t) => {
    const team = await w.p.createTeam();
    const domain = await w.sendingDomain(team, `${name.replace(/[^a-z]+/g, '-')}-sender.test`);
    const [sole, batched, other] = await Promise.all(
      [1, 2, 3].map(() => claimed(team.id, domain, ['someone@record-sole.test'], lastEvent)),
    );
    for (const r of [sole, batched, other]) {
      const [recipient] = await w.p.db('email_recipients').where({ email_id: r.ctx.email.id });
      r.attempt.outcomes = [
        { recipient: { ...recipient, first_deferred_at: recipient.first_deferred_at, status: 'queued' }, outcome },
      ];
    }
    await recordAttempts({ db: w.p.db, log: w.deps.log }, [sole]);
    // Two records in one batch take the transaction.
    await recordAttempts({ db: w.p.db, log: w.deps.log }, [batched, other]);
    const got = await outcomeOf(sole);
    t.deepEqual(got, await outcomeOf(batched));
    t.is(got.recipient.leased_until, null);
    t.is(got.recipient.attempts, 1);
  });
}

test('a lost lease: the one statement writes nothing (no attempt, no event, the email untouched)', async (t) => {
  const team = await w.p.createTeam();
  const domain = await w.sendingDomain(team, 'lost-lease-sender.test');
  const r = await claimed(team.id, domain, ['someone@record-sole.test']);
  const [recipient] = await w.p.db('email_recipients').where({ email_id: r.ctx.email.id });
  r.attempt.outcomes = [{ recipient, outcome: { ...base, action: 'deliver' } }];
  // Another job took it over after the lease ran out.
  await w.p
    .db('email_recipients')
    .where({ id: recipient.id })
    .update({ leased_until: new Date(now.getTime() + 1) });
  await recordAttempts({ db: w.p.db, log: w.deps.log }, [r]);
  t.is((await w.p.db('email_recipients').where({ id: recipient.id }).first()).status, 'queued');
  t.is((await w.p.db('delivery_attempts').where({ email_id: r.ctx.email.id })).length, 0);
  t.deepEqual(
    (await eventsOf(w.p.db, r.ctx.email.id)).map((e) => e.type),
    ['email.sent'],
  );
  t.like(await w.p.db('emails').where({ id: r.ctx.email.id }).first(), { status: 'queued', last_event: 'sent' });
});

test("contact_activity: both ways note a delivered address at the record's time; other outcomes and a lost lease none", async (t) => {
  const team = await w.p.createTeam();
  const domain = await w.sendingDomain(team, 'activity-sender.test');
  const record = async (to: string, outcome: Outcome) => {
    const r = await claimed(team.id, domain, [to]);
    const [recipient] = await w.p.db('email_recipients').where({ email_id: r.ctx.email.id });
    r.attempt.outcomes = [{ recipient, outcome }];
    return r;
  };
  const deliver: Outcome = { ...base, action: 'deliver' };
  const bounce: Outcome = { ...base, action: 'bounce', code: 550, enhanced: '5.1.1', response: '550 5.1.1 No' };
  // One statement (a lone one-recipient record); then a batch, whose two records take the transaction.
  await recordAttempts({ db: w.p.db, log: w.deps.log }, [await record('Sole@record-sole.test', deliver)]);
  await recordAttempts({ db: w.p.db, log: w.deps.log }, [
    await record('batched@record-sole.test', deliver),
    await record('bounced@record-sole.test', bounce),
  ]);
  const lost = await record('lost@record-sole.test', deliver);
  await w.p
    .db('email_recipients')
    .where({ email_id: lost.ctx.email.id })
    .update({ leased_until: new Date(now.getTime() + 1) });
  await recordAttempts({ db: w.p.db, log: w.deps.log }, [lost]);
  t.deepEqual(
    await w.p
      .db('contact_activity')
      .where({ team_id: team.id })
      .orderBy('address')
      .select('address', 'last_delivered_at', 'last_opened_at', 'last_clicked_at'),
    [
      { address: 'batched@record-sole.test', last_delivered_at: now, last_opened_at: null, last_clicked_at: null },
      { address: 'sole@record-sole.test', last_delivered_at: now, last_opened_at: null, last_clicked_at: null },
    ],
  );
});
