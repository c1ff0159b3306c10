// The simulator addresses (CONTRACT, "Sending"), end to end through the deliver queue and the MTA's job,
// with their events, and never a connection.
import test from 'ava';
import type { Queue, Worker } from 'bullmq';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { eventsOf, insertEmail, recipientsOf } from './helpers/emails.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { createQueue, createWorker, queues } from '../shared/queue.ts';
import { until } from './helpers/wait.ts';

let w: MtaWorld;
let queue: Queue;
let worker: Worker;
test.before(async () => {
  w = await startMtaWorld();
  queue = createQueue(w.p.config, queues.deliver);
  worker = createWorker(w.p.config, queues.deliver, async (job) => processDelivery(w.deps, job.data.emailId), {
    concurrency: 4,
  });
});
test.after.always(async () => {
  await worker?.close();
  await queue?.close();
  await w?.close();
});

/** Inserts an email as the accept path does and enqueues its deliver job (job id = email id); waits until done. */
async function send(to: string[]) {
  const team = await w.p.createTeam();
  const managed = await w.p.db('domains').where({ team_id: team.id, managed: true }).first();
  const id = await insertEmail(w.p.db, w.p.deps.blobs, { teamId: team.id, domain: managed, to });
  await queue.add('deliver', { emailId: id }, { jobId: id });
  await until(
    async () => !(await w.p.db('email_recipients').where({ email_id: id }).whereIn('status', ['queued']).first()),
    { what: 'no recipient left queued' },
  );
  return { team, id };
}

test('delivered@ and labelled addresses are delivered without a connection', async (t) => {
  const { id } = await send([w.sim('delivered'), w.sim('delivered+signup')]);
  const rs = await recipientsOf(w.p.db, id);
  t.true([...rs.values()].every((r) => r.status === 'delivered'));
  t.deepEqual(
    (await eventsOf(w.p.db, id)).map((e) => e.type),
    ['email.sent', 'email.delivered'],
  );
  t.is(w.sink.deliveredTo(w.sim('delivered')).length, 0);
  const [attempt] = await w.p.db('delivery_attempts').where({ email_id: id });
  t.like(attempt, { outcome: 'delivered', mx_host: null, domain: w.p.config.SIMULATOR_DOMAIN });
  t.regex(attempt.transcript, /simulator: no network/);
});

test('bounced@ bounces 550 5.1.1 Permanent/General, without adding a suppression', async (t) => {
  const { team, id } = await send([w.sim('bounced')]);
  t.like((await recipientsOf(w.p.db, id)).get(w.sim('bounced')), {
    status: 'bounced',
    enhanced_code: '5.1.1',
    bounce_type: 'Permanent',
    bounce_sub_type: 'General',
  });
  const bounced = (await eventsOf(w.p.db, id)).find((e) => e.type === 'email.bounced');
  t.like(bounced?.data, { to: [w.sim('bounced')], bounce: { type: 'Permanent', subType: 'General' } });
  t.falsy(await w.p.db('suppressions').where({ team_id: team.id }).first());
  t.is((await w.p.db('emails').where({ id }).first()).last_event, 'bounced');
});

test('complained@ is delivered, then complains', async (t) => {
  const { id } = await send([w.sim('complained')]);
  t.deepEqual(
    (await eventsOf(w.p.db, id)).map((e) => e.type),
    ['email.sent', 'email.delivered', 'email.complained'],
  );
  t.is((await w.p.db('emails').where({ id }).first()).last_event, 'complained');
});

test('suppressed@ is suppressed with an email.suppressed event and no attempt', async (t) => {
  const { id } = await send([w.sim('suppressed')]);
  t.is((await recipientsOf(w.p.db, id)).get(w.sim('suppressed'))?.status, 'suppressed');
  const event = (await eventsOf(w.p.db, id)).find((e) => e.type === 'email.suppressed');
  t.like(event?.data, {
    to: [w.sim('suppressed')],
    suppressed: { type: 'OnAccountSuppressionList', reason: 'previous_bounce' },
  });
  t.is((await w.p.db('delivery_attempts').where({ email_id: id })).length, 0);
  t.like(await w.p.db('emails').where({ id }).first(), { status: 'done', last_event: 'suppressed' });
});

test('delayed@ defers once with delivery_delayed at once, then is delivered at its retry', async (t) => {
  const { id } = await send([w.sim('delayed')]);
  const r = (await recipientsOf(w.p.db, id)).get(w.sim('delayed'))!;
  t.is(r.status, 'deferred');
  t.is((await w.p.db('emails').where({ id }).first()).last_event, 'delivery_delayed');
  await processDelivery(w.deps, id, r.next_attempt_at!);
  t.is((await recipientsOf(w.p.db, id)).get(w.sim('delayed'))?.status, 'delivered');
  t.deepEqual(
    (await eventsOf(w.p.db, id)).map((e) => e.type),
    ['email.sent', 'email.delivery_delayed', 'email.delivered'],
  );
  t.is((await w.p.db('emails').where({ id }).first()).last_event, 'delivered');
});

test('simulator and real recipients in one email each take their own path', async (t) => {
  const team = await w.p.createTeam();
  const domain = await w.sendingDomain(team, 'sender-simmix.test');
  w.mx('simmix.test');
  const id = await insertEmail(w.p.db, w.p.deps.blobs, {
    teamId: team.id,
    domain,
    to: [w.sim('bounced'), 'real@simmix.test'],
  });
  await processDelivery(w.deps, id);
  const rs = await recipientsOf(w.p.db, id);
  t.is(rs.get(w.sim('bounced'))?.status, 'bounced');
  t.is(rs.get('real@simmix.test')?.status, 'delivered');
  t.deepEqual(
    w.sink.deliveredTo('real@simmix.test')[0].to,
    ['real@simmix.test'],
    'the simulator address never reaches the wire',
  );
});
