// Leases taken together (mta/delivery/lease.ts createLeaseGroup): the jobs that ask while a lease statement runs share
// the next one, and each gets exactly what its own statement would have leased: its own token, its own clock for
// what is due, and never the recipients another job of the same email holds.
import test from 'ava';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { insertEmail } from './helpers/emails.ts';
import { createDb } from '../shared/db/knex.ts';
import { createLeaseGroup } from '../mta/delivery/lease.ts';

let w: MtaWorld;
test.before(async () => {
  w = await startMtaWorld();
});
test.after.always(async () => {
  await w?.close();
});

async function simulatedEmail() {
  const team = await w.p.createTeam();
  const managed = await w.p.db('domains').where({ team_id: team.id, managed: true }).first();
  return insertEmail(w.p.db, w.p.deps.blobs, { teamId: team.id, domain: managed, to: [w.sim('delivered')] });
}

/** A database client of its own that counts the connections it hands out: one per statement here. */
function countedDb() {
  const db = createDb(w.p.config, { min: 0, max: 4 });
  const counted = { statements: 0 };
  const acquire = db.client.acquireConnection.bind(db.client);
  db.client.acquireConnection = () => (counted.statements++, acquire());
  return { db, counted };
}

test('jobs that ask together share one statement, each with its own lease; a second job of one email waits and gets none', async (t) => {
  const ids = await Promise.all(Array.from({ length: 10 }, () => simulatedEmail()));
  const { db, counted } = countedDb();
  t.teardown(() => db.destroy());
  const lease = createLeaseGroup(db, w.deps.log);
  const now = new Date();
  const works = await Promise.all([...ids, ids[0]].map((id) => lease(id, now)));
  t.is(counted.statements, 2, 'the ten emails in one statement, the repeated one in the next');
  t.is(works[10], null, 'the second job of the first email finds its recipient leased');
  for (const [i, id] of ids.entries()) {
    const work = works[i]!;
    t.is(work.email.id, id);
    t.is(work.lease.recipients.length, 1);
    const token = await work.lease.use(async (held) => held);
    const holding = await w.p.db('email_recipients').where({ email_id: id, leased_until: token }).count({ n: '*' });
    t.is(Number(holding[0].n), 1, `${id} leased under its job's own token`);
    work.lease.release();
  }
});

test("each job's own clock decides what is due, in a statement shared with a job whose clock is later", async (t) => {
  const [early, late] = await Promise.all([simulatedEmail(), simulatedEmail()]);
  const now = new Date();
  const inAnHour = new Date(now.getTime() + 3_600_000);
  await w.p
    .db('email_recipients')
    .whereIn('email_id', [early, late])
    .update({ status: 'deferred', next_attempt_at: inAnHour });
  const { db, counted } = countedDb();
  t.teardown(() => db.destroy());
  const lease = createLeaseGroup(db, w.deps.log);
  const [notYet, due] = await Promise.all([lease(early, now), lease(late, new Date(now.getTime() + 7_200_000))]);
  t.is(counted.statements, 1);
  t.is(notYet, null, 'not due by its own clock');
  t.is((await w.p.db('email_recipients').where({ email_id: early }).first()).leased_until, null);
  t.truthy(due, 'due by its own');
  t.is(due!.lease.recipients.length, 1);
  due!.lease.release();
});
