// Group commit of attempt outcomes (mta/delivery/group-commit.ts): records that arrive together share one
// transaction and each lands as if alone; a record that cannot be written fails only its own job.
import test from 'ava';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { eventsOf, insertEmail, recipientsOf } from './helpers/emails.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { takeLease } from '../mta/delivery/lease.ts';
import { createGroupCommit } from '../mta/delivery/group-commit.ts';
import type { EmailRow } from '../shared/emails/present.ts';

let w: MtaWorld;
test.before(async () => {
  w = await startMtaWorld();
});
test.after.always(async () => {
  await w?.close();
});

async function simulatedEmail(to: string[]) {
  const team = await w.p.createTeam();
  const managed = await w.p.db('domains').where({ team_id: team.id, managed: true }).first();
  return insertEmail(w.p.db, w.p.deps.blobs, { teamId: team.id, domain: managed, to });
}

test('many jobs at once: every outcome recorded, each email settled with its own events', async (t) => {
  const ids = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      simulatedEmail(i % 3 === 0 ? [w.sim('bounced'), w.sim('delivered')] : [w.sim('delivered')]),
    ),
  );
  await Promise.all(ids.map((id) => processDelivery(w.deps, id)));
  for (const [i, id] of ids.entries()) {
    const email = await w.p.db('emails').where({ id }).first();
    t.is(email.status, 'done');
    t.is(email.last_event, i % 3 === 0 ? 'bounced' : 'delivered');
    const types = (await eventsOf(w.p.db, id)).map((e) => e.type);
    t.deepEqual(
      [...types].sort(),
      i % 3 === 0 ? ['email.bounced', 'email.delivered', 'email.sent'] : ['email.delivered', 'email.sent'],
    );
    t.true([...(await recipientsOf(w.p.db, id)).values()].every((r) => r.leased_until === null && r.attempts === 1));
    t.is((await w.p.db('delivery_attempts').where({ email_id: id })).length, 1);
  }
});

test('a record that cannot be written fails alone; the others of its batch land', async (t) => {
  const record = createGroupCommit({ db: w.p.db, log: w.deps.log });
  const [good, bad] = await Promise.all([simulatedEmail([w.sim('delivered')]), simulatedEmail([w.sim('delivered')])]);
  const prepared = [];
  for (const id of [good, bad]) {
    const email: EmailRow = await w.p.db('emails').where({ id }).first();
    const now = new Date();
    const { lease } = (await takeLease(w.p.db, w.deps.log, id, now))!;
    lease.release();
    prepared.push({ id, email, now, lease, token: await lease.use(async (token) => token) });
  }
  const outcome = { action: 'deliver' as const, rule: 'ok', code: 250, enhanced: '2.0.0', response: '250 2.0.0 Ok' };
  // Both in the same tick: one batch. delivery_attempts.domain is NOT NULL, so the bad one's row cannot be written.
  const pending = prepared.map(({ id, email, now, lease, token }) =>
    record({
      ctx: { email, now, lease: token },
      attempt: {
        domain: id === bad ? (null as unknown as string) : 'example.net',
        mxHost: null,
        tls: false,
        transcript: '',
        startedAt: now,
        durationMs: 0,
        outcomes: lease.recipients.map((recipient) => ({ recipient, outcome })),
      },
    }),
  );
  const [ok, failed] = await Promise.allSettled(pending);
  t.is(ok.status, 'fulfilled');
  t.is(failed.status, 'rejected');
  t.is((await w.p.db('emails').where({ id: good }).first()).status, 'done');
  t.is((await w.p.db('emails').where({ id: bad }).first()).status, 'queued', 'as takeLease left it');
  t.truthy(
    (await w.p.db('email_recipients').where({ email_id: bad }).first()).leased_until,
    'its lease stays for the sweep',
  );
});

test('takeLease reads the email as stored and leases its recipients, writing nothing else', async (t) => {
  const team = await w.p.createTeam();
  const managed = await w.p.db('domains').where({ team_id: team.id, managed: true }).first();
  for (const tags of [
    [],
    [
      { name: 'kind', value: 'welcome' },
      { name: 'tier', value: 'gold' },
    ],
  ]) {
    const id = await insertEmail(w.p.db, w.p.deps.blobs, {
      teamId: team.id,
      domain: managed,
      to: [w.sim('delivered'), w.sim('bounced')],
      subject: 'Ünïcode "quoted" subject',
      tags,
      attachments: [{ filename: 'a.txt', content: Buffer.from('x'), contentType: 'text/plain' }],
      now: new Date('2026-11-23T10:11:12.345Z'),
    });
    const row: EmailRow = await w.p.db('emails').where({ id }).first();
    const leased = (await takeLease(w.p.db, w.deps.log, id, new Date()))!;
    leased.lease.release();
    const { attachments, raw, ...email } = leased.email;
    t.deepEqual(email, { ...row, status: 'queued' }, 'the row as knex reads it, dates included');
    t.is(raw, null, 'an API send has no stored message');
    t.deepEqual(
      attachments?.map((a) => a.filename),
      ['a.txt'],
    );
    t.deepEqual(leased.lease.recipients.map((r) => r.address).sort(), [w.sim('bounced'), w.sim('delivered')]);
    t.deepEqual(
      (await eventsOf(w.p.db, id)).map((e) => e.type),
      ['email.sent'],
      "the accepted email's own; takeLease adds none",
    );
    t.deepEqual(await w.p.db('emails').where({ id }).first(), row, 'the email untouched');
    t.is(await takeLease(w.p.db, w.deps.log, id, new Date()), null, 'nothing left to lease');
  }
});
