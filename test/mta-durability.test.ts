// Delivery's guarantees: a lease keeps two jobs from sending one recipient twice; the sweep finds what a crash
// left (queued without a job, leased past its lease, deferred and due) and hands it to a deliver job once; a
// pooled session is reused across jobs.
import test from 'ava';
import type { Queue, Worker } from 'bullmq';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { insertEmail, recipientsOf } from './helpers/emails.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { LEASE_MS, takeLease } from '../mta/delivery/lease.ts';
import { findDue, sweepDeliveries, sweepJobId, STUCK_QUEUED_MS } from '../mta/delivery/sweep.ts';
import { createQueue, createWorker, queues } from '../shared/queue.ts';
import { until } from './helpers/wait.ts';

let w: MtaWorld;
let queue: Queue;
let worker: Worker | undefined;
test.before(async () => {
  w = await startMtaWorld();
  queue = createQueue(w.p.config, queues.deliver);
});
test.after.always(async () => {
  await worker?.close();
  await queue?.close();
  await w?.close();
});

async function email(rcptDomain: string, to: string[]) {
  const team = await w.p.createTeam();
  const domain = await w.sendingDomain(team, `sender-${rcptDomain}`);
  w.mx(rcptDomain);
  return insertEmail(w.p.db, w.p.deps.blobs, { teamId: team.id, domain, to });
}

test.serial(
  'two jobs of one email at once (two mta copies): the lease lets one send, each recipient once',
  async (t) => {
    const id = await email('race.test', ['r1@race.test', 'r2@race.test']);
    const other = w.moreDeps();
    const results = await Promise.all([
      processDelivery(w.deps, id),
      processDelivery(other, id),
      processDelivery(w.deps, id),
    ]);
    t.is(
      results.reduce((n, r) => n + r.leased, 0),
      2,
      'the recipients were leased once in all',
    );
    t.is(w.sink.deliveredTo('r1@race.test').length, 1);
    t.is(w.sink.deliveredTo('r2@race.test').length, 1);
    t.is((await processDelivery(other, id)).leased, 0, 'a late duplicate finds nothing to do');
    t.is((await w.p.db('events').whereRaw(`data->>'email_id' = ?`, [id]).where({ type: 'email.sent' })).length, 1);
  },
);

test.serial(
  'a recipient whose lease was held by a job that crashed is found by the sweep and delivered exactly once',
  async (t) => {
    const id = await email('crash.test', ['c@crash.test']);
    const now = new Date();
    // What a job killed mid-delivery leaves: the email sending, the recipient leased, its lease now over.
    await w.p.db('emails').where({ id }).update({ status: 'sending', last_event: 'sent' });
    await w.p
      .db('email_recipients')
      .where({ email_id: id })
      .update({ leased_until: new Date(now.getTime() - 1000) });
    // A recipient another job still holds is not touched.
    const held = await email('held.test', ['h@held.test']);
    await w.p
      .db('email_recipients')
      .where({ email_id: held })
      .update({ leased_until: new Date(now.getTime() + 60_000) });

    const due = await findDue(w.p.db, now);
    t.true(due.some((d) => d.emailId === id));
    t.false(due.some((d) => d.emailId === held));

    t.true((await sweepDeliveries(w.p.db, queue, now)) >= 1);
    t.is(await sweepDeliveries(w.p.db, queue, now), 0, 'a second sweep before the job ran adds nothing (same job id)');
    worker = createWorker(w.p.config, queues.deliver, async (job) => processDelivery(w.deps, job.data.emailId), {
      concurrency: 4,
    });
    await w.sink.waitFor(() => w.sink.deliveredTo('c@crash.test').length > 0);
    await until(async () => (await recipientsOf(w.p.db, id)).get('c@crash.test')?.status === 'delivered');
    t.truthy(await queue.getJob(sweepJobId(id, new Date(now.getTime() - 1000))));
    await sweepDeliveries(w.p.db, queue);
    t.is(w.sink.deliveredTo('c@crash.test').length, 1);
    t.is(w.sink.deliveredTo('h@held.test').length, 0);
    await worker.close();
    worker = undefined;
  },
);

test.serial(
  'the sweep re-enqueues an email queued without a job (a crash between commit and enqueue), not one whose job waits',
  async (t) => {
    const lost = await email('lost.test', ['l@lost.test']);
    const waiting = await email('waiting.test', ['w@waiting.test']);
    await queue.add('deliver', { emailId: waiting }, { jobId: waiting, delay: 60_000 });
    const soon = new Date();
    t.false(
      (await findDue(w.p.db, soon)).some((d) => d.emailId === lost),
      'freshly queued: its own job is on the way',
    );
    const later = new Date(soon.getTime() + STUCK_QUEUED_MS + 1000);
    const due = await findDue(w.p.db, later);
    t.true(due.some((d) => d.emailId === lost) && due.some((d) => d.emailId === waiting));
    await sweepDeliveries(w.p.db, queue, later);
    const lostRow = await w.p.db('email_recipients').where({ email_id: lost }).first();
    t.truthy(await queue.getJob(sweepJobId(lost, lostRow.next_attempt_at)));
    const jobs = await queue.getJobs(['waiting', 'delayed', 'prioritized']);
    t.false(
      jobs.some((j) => j.id?.startsWith(`${waiting}-s`)),
      'its own job is waiting: left alone',
    );
    await queue.obliterate({ force: true });
  },
);

test.serial(
  'a deferred recipient becomes due and the sweep hands it to a job; the retry job id of the last attempt is honoured',
  async (t) => {
    const id = await email('due.test', ['d@due.test']);
    w.sink.script('d@due.test', { rcpt: '450 4.2.0 later' });
    const t0 = new Date();
    await processDelivery(w.deps, id, t0);
    const next = new Date(t0.getTime() + 60_000);
    t.false((await findDue(w.p.db, new Date(t0.getTime() + 59_000))).some((d) => d.emailId === id));
    const [due] = (await findDue(w.p.db, next)).filter((d) => d.emailId === id);
    t.is(due.expectedJobId, `${id}-r${Math.floor(next.getTime() / 1000)}`);
    await sweepDeliveries(w.p.db, queue, next);
    t.truthy(await queue.getJob(`${id}-s${Math.floor(next.getTime() / 1000)}`));
    await queue.obliterate({ force: true });
  },
);

test.serial('a session is kept open and reused by the next job to the same MX', async (t) => {
  const first = await email('pooled.test', ['p1@pooled.test']);
  const second = await email('pooled2.test', ['p2@pooled2.test']);
  // Both domains' MX resolve to the same address: the second job takes the first one's idle session.
  await processDelivery(w.deps, first);
  await processDelivery(w.deps, second);
  const [a] = w.sink.deliveredTo('p1@pooled.test');
  const [b] = w.sink.deliveredTo('p2@pooled2.test');
  t.is(a.sessionId, b.sessionId);
  const attempt = await w.p.db('delivery_attempts').where({ email_id: second }).first();
  t.regex(attempt.transcript, /^\* reusing the session/);
  t.true(attempt.tls);
});

test.serial(
  'the per-destination cap: with one session allowed per MX host, parallel jobs to it take turns on one session',
  async (t) => {
    const capped = w.moreDeps({ maxPerDestination: 1 });
    const ids = await Promise.all(['q1', 'q2', 'q3'].map((n) => email(`${n}-capped.test`, [`${n}@${n}-capped.test`])));
    // Three domains hosted by one provider: the same MX host (as Google Workspace domains share theirs).
    for (const n of ['q1', 'q2', 'q3'])
      w.dns.set(`${n}-capped.test`, 'MX', [{ exchange: 'mx.shared-provider.test', priority: 10 }]);
    w.dns.set('mx.shared-provider.test', 'A', ['127.0.0.1']);
    const before = w.sink.stats.connections;
    await Promise.all(ids.map((id) => processDelivery(capped, id)));
    const sessions = new Set(['q1', 'q2', 'q3'].map((n) => w.sink.deliveredTo(`${n}@${n}-capped.test`)[0].sessionId));
    t.is(sessions.size, 1, 'one session carried all three');
    t.is(w.sink.stats.connections - before, 1);
  },
);

test.serial(
  'the message memory budget: jobs whose messages do not fit together wait their turn, and all are delivered',
  async (t) => {
    // A budget of one message: three parallel jobs run one after another, so one session carries them all (with room
    // for all three they would open three: the per-destination cap is 5).
    const budgeted = w.moreDeps({ messageMemoryBytes: 50_000 });
    const ids = await Promise.all(['m1', 'm2', 'm3'].map((n) => email(`${n}-budget.test`, [`${n}@${n}-budget.test`])));
    await w.p.db('emails').whereIn('id', ids).update({ size_bytes: 40_000 });
    for (const n of ['m1', 'm2', 'm3'])
      w.dns.set(`${n}-budget.test`, 'MX', [{ exchange: 'mx.budget-provider.test', priority: 10 }]);
    w.dns.set('mx.budget-provider.test', 'A', ['127.0.0.1']);
    const before = w.sink.stats.connections;
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, budgeted.memory.inUse());
    }, 1);
    try {
      await Promise.all(ids.map((id) => processDelivery(budgeted, id)));
    } finally {
      clearInterval(sampler);
    }
    for (const n of ['m1', 'm2', 'm3']) t.is(w.sink.deliveredTo(`${n}@${n}-budget.test`).length, 1);
    t.is(w.sink.stats.connections - before, 1, 'one at a time: one session carried all three');
    t.true(peak <= 50_000 && peak > 0, `in use at most the budget (peak ${peak})`);
    t.is(budgeted.memory.inUse(), 0, 'every job gave its share back');
  },
);

test.serial(
  'a living job keeps its lease: the heartbeat moves leased_until on, and its record still lands',
  async (t) => {
    const id = await email('heartbeat.test', ['hb@heartbeat.test']);
    const now = new Date();
    const lease = (await takeLease(w.p.db, w.deps.log, id, now, 20))?.lease;
    t.truthy(lease);
    const first = (await w.p.db('email_recipients').where({ email_id: id }).first()).leased_until as Date;
    await until(
      async () =>
        ((await w.p.db('email_recipients').where({ email_id: id }).first()).leased_until as Date).getTime() >
        first.getTime(),
    );
    const moved = await lease!.use((token) =>
      w.p.db('email_recipients').where({ email_id: id, leased_until: token }).update({ leased_until: null }),
    );
    lease!.release();
    t.is(moved, 1, 'the current token matches the row, renewals included');
    const again = (await takeLease(w.p.db, w.deps.log, id, new Date(now.getTime() + 1)))?.lease;
    again?.release();
    t.is(again?.recipients.length, 1, 'released rows are free again');
  },
);

test.serial('a lease another job took (it ran out while the database was away) is never proven again', async (t) => {
  const id = await email('taken-over.test', ['t@taken-over.test']);
  const lease = (await takeLease(w.p.db, w.deps.log, id, new Date(), 20))!.lease;
  t.true(lease.proven());
  // Another job's token on the row, as a takeLease after the lease ran out writes it.
  await w.p
    .db('email_recipients')
    .where({ email_id: id })
    .update({ leased_until: new Date(Date.now() + LEASE_MS) });
  await new Promise((r) => setTimeout(r, 300)); // renewals come and find no row with their token
  t.false(lease.proven(), 'a renewal of nothing proves nothing');
  t.false(lease.proven(0));
  lease.release();
});

test.serial(
  'a lease is proven only while its renewals come through; a live one is never taken, a dead one is',
  async (t) => {
    const id = await email('proof.test', ['p@proof.test']);
    const now = new Date();
    // Renewed every 20 ms: still proven, with nearly the whole lease ahead, long after it was taken.
    const renewed = (await takeLease(w.p.db, w.deps.log, id, now, 20))!.lease;
    await new Promise((r) => setTimeout(r, 300)); // time passes: renewals come (or do not)
    t.true(renewed.proven(LEASE_MS - 250));
    t.is(await takeLease(w.p.db, w.deps.log, id, new Date(now.getTime() + 300)), null, 'a live lease is not taken');
    renewed.release();
    // No renewal comes through (the next is hours away, as if the database stopped answering): the proof runs down.
    await w.p.db('email_recipients').where({ email_id: id }).update({ leased_until: null });
    const silent = (await takeLease(w.p.db, w.deps.log, id, now, 3_600_000))!.lease;
    t.true(silent.proven(LEASE_MS - 250));
    await new Promise((r) => setTimeout(r, 300)); // time passes: renewals come (or do not)
    t.false(silent.proven(LEASE_MS - 250), 'the lease no longer covers as much as it did');
    t.true(silent.proven());
    silent.release();
    // A holder that died: once LEASE_MS has passed, a new takeLease takes its recipients.
    const later = await takeLease(w.p.db, w.deps.log, id, new Date(now.getTime() + LEASE_MS + 1000));
    later?.lease.release();
    t.is(later?.lease.recipients.length, 1);
  },
);
