// One rule for an email's last_event and status (shared/emails/last-event.ts). Every case of the table runs
// through each path that must agree: the rule itself, the MTA's record stage (its transaction and, for a
// one-recipient email, its one statement), the inbound bounce reader's refresh and, for the states an email can
// be accepted in, the accept statement.
import test from 'ava';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { insertEmail } from './helpers/emails.ts';
import { takeLease } from '../mta/delivery/lease.ts';
import { recordAttempts, type PendingRecord } from '../mta/delivery/record.ts';
import type { Outcome } from '../mta/delivery/types.ts';
import { emailState, refreshEmail, type RecipientStatus } from '../shared/emails/last-event.ts';
import type { EmailRow, LastEvent } from '../shared/emails/present.ts';

let w: MtaWorld;
let team: Awaited<ReturnType<MtaWorld['p']['createTeam']>>;
let domain: { id: string; name: string };
test.before(async () => {
  w = await startMtaWorld();
  team = await w.p.createTeam();
  domain = await w.sendingDomain(team, 'last-event-sender.test');
});
test.after.always(async () => {
  await w?.close();
});

const r = (status: string, delay_notified = false): RecipientStatus => ({ status, delay_notified });

interface Case {
  /** The email's last_event before the change (engagement another area recorded, or the MTA's own). */
  current: LastEvent;
  /** The other recipients, as they already are. */
  others: RecipientStatus[];
  /** The recipient this change moves, as it ends up. */
  moved: RecipientStatus;
  complained?: boolean;
  expect: { last_event: LastEvent; status: 'queued' | 'done' };
}

const cases: Record<string, Case> = {
  'delivered alone': {
    current: 'sent',
    others: [],
    moved: r('delivered'),
    expect: { last_event: 'delivered', status: 'done' },
  },
  'deferred, not yet late': {
    current: 'sent',
    others: [],
    moved: r('deferred'),
    expect: { last_event: 'sent', status: 'queued' },
  },
  'deferred and late': {
    current: 'sent',
    others: [],
    moved: r('deferred', true),
    expect: { last_event: 'delivery_delayed', status: 'queued' },
  },
  'bounced alone': {
    current: 'sent',
    others: [],
    moved: r('bounced'),
    expect: { last_event: 'bounced', status: 'done' },
  },
  'failed alone': { current: 'sent', others: [], moved: r('failed'), expect: { last_event: 'failed', status: 'done' } },
  'suppressed alone': {
    current: 'sent',
    others: [],
    moved: r('suppressed'),
    expect: { last_event: 'suppressed', status: 'done' },
  },
  'delivered under a click': {
    current: 'clicked',
    others: [],
    moved: r('delivered'),
    expect: { last_event: 'clicked', status: 'done' },
  },
  'late under an open': {
    current: 'opened',
    others: [],
    moved: r('deferred', true),
    expect: { last_event: 'opened', status: 'queued' },
  },
  'bounced over an open': {
    current: 'opened',
    others: [],
    moved: r('bounced'),
    expect: { last_event: 'bounced', status: 'done' },
  },
  'failed over a click': {
    current: 'clicked',
    others: [],
    moved: r('failed'),
    expect: { last_event: 'failed', status: 'done' },
  },
  'a complaint stays': {
    current: 'complained',
    others: [],
    moved: r('bounced'),
    expect: { last_event: 'complained', status: 'done' },
  },
  'delivered beside a suppressed one': {
    current: 'sent',
    others: [r('suppressed')],
    moved: r('delivered'),
    expect: { last_event: 'delivered', status: 'done' },
  },
  'in flight beside a suppressed one': {
    current: 'sent',
    others: [r('suppressed')],
    moved: r('deferred'),
    expect: { last_event: 'sent', status: 'queued' },
  },
  'delivered while another is late': {
    current: 'delivery_delayed',
    others: [r('deferred', true)],
    moved: r('delivered'),
    expect: { last_event: 'delivery_delayed', status: 'queued' },
  },
  'delivered while another is pending': {
    current: 'sent',
    others: [r('queued')],
    moved: r('delivered'),
    expect: { last_event: 'delivered', status: 'queued' },
  },
  'one bounce among deliveries': {
    current: 'delivered',
    others: [r('delivered'), r('delivered')],
    moved: r('bounced'),
    expect: { last_event: 'bounced', status: 'done' },
  },
  'delivered after another bounced': {
    current: 'bounced',
    others: [r('bounced')],
    moved: r('delivered'),
    expect: { last_event: 'bounced', status: 'done' },
  },
  'a complaint reported': {
    current: 'delivered',
    others: [r('delivered')],
    moved: r('delivered'),
    complained: true,
    expect: { last_event: 'complained', status: 'done' },
  },
};

/** The MTA outcome that leaves a recipient as `moved` is. */
function outcomeFor(moved: RecipientStatus): Outcome {
  const base = { code: 250, enhanced: '2.0.0', response: '250 2.0.0 Ok', rule: 'test' };
  switch (moved.status) {
    case 'delivered':
      return { ...base, action: 'deliver' };
    case 'deferred':
      return {
        ...base,
        action: 'defer',
        code: 451,
        enhanced: '4.3.0',
        response: '451 4.3.0 Try later',
        simulated: moved.delay_notified,
      };
    case 'bounced':
      return {
        ...base,
        action: 'bounce',
        code: 552,
        enhanced: '5.2.2',
        response: '552 5.2.2 Mailbox full',
        bounce: { type: 'Transient', subType: 'MailboxFull' },
      };
    case 'failed':
      return {
        ...base,
        action: 'fail',
        code: 554,
        enhanced: '5.7.0',
        response: '554 5.7.0 No domain',
        failReason: 'domain_not_found',
      };
    case 'suppressed':
      return { ...base, action: 'suppress', code: 550, enhanced: '5.1.1', response: '550 5.1.1 Suppressed' };
    default:
      throw new Error(`no outcome leaves a recipient ${moved.status}`);
  }
}

let serial = 0;
/** An email with a recipient per state: the others set as they are, the last one queued and leased. */
async function emailOf(c: Case) {
  const to = [...c.others, c.moved].map(() => `someone${++serial}@last-event-rcpt.test`);
  const now = new Date();
  const id = await insertEmail(w.p.db, w.p.deps.blobs, { teamId: team.id, domain, to, now });
  for (const [i, other] of c.others.entries()) {
    await w.p
      .db('email_recipients')
      .where({ email_id: id, address: to[i] })
      .update({ ...other, next_attempt_at: other.status === 'queued' ? now : null });
  }
  await w.p.db('emails').where({ id }).update({ last_event: c.current });
  return { id, to, now };
}

async function stateOf(id: string) {
  return w.p.db('emails').where({ id }).first('last_event', 'status');
}

/** The MTA's record of the moved recipient's outcome; `alone`: the one-statement path (else the transaction's). */
async function throughRecord(c: Case, alone: boolean) {
  const { id, to, now } = await emailOf(c);
  const leased = (await takeLease(w.p.db, w.deps.log, id, now))!;
  leased.lease.release();
  const token = await leased.lease.use(async (t) => t);
  const email: EmailRow = await w.p.db('emails').where({ id }).first();
  const recipient = await w.p
    .db('email_recipients')
    .where({ email_id: id, address: to.at(-1) })
    .first();
  const record: PendingRecord = {
    ctx: { email, now, lease: token },
    attempt: {
      domain: 'last-event-rcpt.test',
      mxHost: 'mx.last-event-rcpt.test',
      tls: true,
      transcript: '',
      startedAt: now,
      durationMs: 1,
      outcomes: [{ recipient, outcome: outcomeFor(c.moved) }],
    },
  };
  // Another email's record with no outcome beside it makes a batch, which takes the transaction.
  const companion = async (): Promise<PendingRecord> => {
    const other: EmailRow = await w.p
      .db('emails')
      .where({ id: (await emailOf(cases['delivered alone'])).id })
      .first();
    return { ctx: { ...record.ctx, email: other }, attempt: { ...record.attempt, outcomes: [] } };
  };
  const batch = alone ? [record] : [record, await companion()];
  await recordAttempts({ db: w.p.db, log: w.deps.log }, batch);
  assertMoved(
    await w.p
      .db('email_recipients')
      .where({ email_id: id, address: to.at(-1) })
      .first(),
    c.moved,
  );
  return stateOf(id);
}

function assertMoved(row: RecipientStatus, moved: RecipientStatus) {
  if (row.status !== moved.status || row.delay_notified !== moved.delay_notified) {
    throw new Error(
      `the record left the recipient ${row.status}/${row.delay_notified}, not ${moved.status}/${moved.delay_notified}`,
    );
  }
}

/** The bounce reader's refresh after the moved recipient changed (an asynchronous bounce or a complaint). */
async function throughRefresh(c: Case) {
  const { id, to } = await emailOf(c);
  await w.p
    .db('email_recipients')
    .where({ email_id: id, address: to.at(-1) })
    .update(c.moved);
  await w.p.db.transaction((trx) => refreshEmail(trx, id, new Date(), c.complained ?? false));
  return stateOf(id);
}

for (const [name, c] of Object.entries(cases)) {
  test(`${name}: the rule, the MTA's record and the bounce reader agree`, async (t) => {
    t.deepEqual(
      emailState({ last_event: c.current, status: 'queued' }, [...c.others, c.moved], c.complained),
      c.expect,
      'the rule',
    );
    t.deepEqual(await throughRefresh(c), c.expect, 'the bounce reader');
    if (c.complained) return; // a complaint reaches an email only through the bounce reader
    t.deepEqual(await throughRecord(c, false), c.expect, 'the record transaction');
    if (c.others.length === 0) t.deepEqual(await throughRecord(c, true), c.expect, 'the one-statement record');
  });
}

test('accepted: the accept statement gives the state the rule gives for the recipients as accepted', async (t) => {
  const sim = (local: string) => w.sim(`${local}+${++serial}`);
  const cases = [
    { name: 'every recipient queued', suppressed: 0, expect: { last_event: 'sent', status: 'queued' } },
    { name: 'one suppressed beside one queued', suppressed: 1, expect: { last_event: 'sent', status: 'queued' } },
    { name: 'every recipient suppressed', suppressed: 2, expect: { last_event: 'suppressed', status: 'done' } },
  ];
  for (const c of cases) {
    const to = [sim('delivered'), sim('delivered')];
    const suppressed = to.slice(0, c.suppressed);
    for (const email of suppressed) {
      const res = await w.p.request('POST', '/suppressions', { key: team.key, body: { email } });
      t.is(res.status, 201, res.text);
    }
    const res = await w.p.request('POST', '/emails', {
      key: team.key,
      body: { from: `hello@${domain.name}`, to, subject: c.name, text: 'x' },
    });
    t.is(res.status, 200, res.text);
    const recipients: RecipientStatus[] = await w.p
      .db('email_recipients')
      .where({ email_id: res.body.id })
      .select('status', 'delay_notified');
    t.deepEqual(
      recipients.map((x) => x.status).sort(),
      to.map((a) => (suppressed.includes(a) ? 'suppressed' : 'queued')).sort(),
      c.name,
    );
    t.deepEqual(await stateOf(res.body.id), c.expect, c.name);
    t.deepEqual(emailState({ last_event: 'queued', status: 'queued' }, recipients), c.expect, `${c.name}: the rule`);
  }
});
