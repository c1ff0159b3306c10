// Scheduled sends (CONTRACT, "Sending") with the real worker process (worker/main.ts, whose release runs every half
// second): an email is released within a second of its scheduled_at, measured in the database (the
// release's updated_at against scheduled_at), not by this test's polling; a worker killed with SIGKILL before
// the time and started again after it releases the email at once, and once; a reschedule records
// email.scheduled again and is released at its new time; a cancel records email.canceled and the running worker
// never releases the email. Released emails are then delivered by the mta's job to the loopback sink. The grammar
// of scheduled_at is emails-scheduled-grammar.test.ts's; scheduled sends through the API with the release run
// directly, emails-scheduled-api.test.ts's.
import test, { type ExecutionContext } from 'ava';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { sendingTeam, type SendingTeam } from './helpers/sending.ts';
import { startEntry, type EntryProcess } from './helpers/processes.ts';
import { eventsOf, recipientsOf } from './helpers/emails.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { RELEASE_EVERY_MS } from '../worker/sending.ts';
import { untilNextTick } from '../shared/ticker.ts';
import { createQueue, queues } from '../shared/queue.ts';
import { until } from './helpers/wait.ts';

let w: MtaWorld;
let team: SendingTeam;
let worker: EntryProcess | null = null;
test.before(async () => {
  w = await startMtaWorld();
  team = await sendingTeam(w.p, w.dns);
  w.mx('later-inbox.test');
  // The Redis of an earlier version, whose release was a BullMQ job scheduler of the sending queue.
  const sending = createQueue(w.p.config, queues.sending);
  await sending.upsertJobScheduler('release', { every: 1000 }, { name: 'release', data: {} });
  await sending.close();
});
test.after.always(async () => {
  await worker?.stop();
  await w?.close();
});

/** Lets time pass where a test shows that nothing happens meanwhile; waiting for something is until()'s. */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts the worker as production does; resolves once it says it started (minutes allowed on a busy machine). */
async function startWorker(): Promise<{ proc: EntryProcess; spawnedAt: number; startedAt: number }> {
  const spawnedAt = Date.now();
  const proc = startEntry('worker/main.ts', w.p.config);
  worker = proc;
  await proc.logged('worker.started', 120_000);
  return { proc, spawnedAt, startedAt: Date.now() };
}

async function runningWorker(): Promise<EntryProcess> {
  return worker ?? (await startWorker()).proc;
}

interface EmailRow {
  id: string;
  status: string;
  last_event: string;
  scheduled_at: Date;
  updated_at: Date;
}

const emailRow = async (id: string): Promise<EmailRow> => w.p.db('emails').where({ id }).first();

/** Polls the row (this is only how the test notices; the instants it asserts are the database's). */
async function waitForRow(id: string, check: (row: EmailRow) => boolean, ms = 30_000): Promise<EmailRow> {
  return until(
    async () => {
      const row = await emailRow(id);
      return check(row) ? row : undefined;
    },
    { what: `email ${id} to move`, timeoutMs: ms, intervalMs: 50 },
  ).catch((err) => {
    throw new Error(`${(err as Error).message}:\n${worker?.output().slice(-2000) ?? ''}`);
  });
}

async function schedule(to: string, scheduledAt: string): Promise<string> {
  const res = await w.p.request('POST', '/emails', {
    key: team.key,
    body: {
      from: `Shop <shop@${team.domain}>`,
      to,
      subject: 'Later',
      text: 'Scheduled hello',
      scheduled_at: scheduledAt,
    },
  });
  if (res.status !== 200) throw new Error(`POST /emails answered ${res.status} ${res.text}`);
  return res.body.id;
}

/** Every deliver job in the queue (any state) for this email. */
async function deliverJobs(id: string) {
  const jobs = await w.p.deliverQueue.getJobs([
    'waiting',
    'delayed',
    'active',
    'completed',
    'failed',
    'prioritized',
    'paused',
    'waiting-children',
  ]);
  return jobs.filter((j) => j?.data?.emailId === id);
}

/** The email's deliver jobs once there is one: the release enqueues just after its commit (within ~20 ms, batched). */
async function enqueuedJobs(id: string, ms = 10_000) {
  return until(
    async () => {
      const jobs = await deliverJobs(id);
      return jobs.length ? jobs : undefined;
    },
    { what: `a deliver job for ${id}`, timeoutMs: ms },
  );
}

/** No event type recorded twice for the email (a second release would repeat its events). */
async function assertNoRepeatedEvents(t: ExecutionContext, id: string) {
  const types = (await eventsOf(w.p.db, id)).map((e) => e.type);
  t.deepEqual(
    types.filter((type, i) => types.indexOf(type) !== i),
    [],
    `events: ${types.join(', ')}`,
  );
}

const releasedMs = (row: EmailRow) => row.updated_at.getTime() - row.scheduled_at.getTime();

/**
 * The worker's release schedule: it runs at every multiple of RELEASE_EVERY_MS on the clock (shared/ticker.ts), the
 * next at `next`. An email may wait up to one period for the next run, so the period is what the 1 s promise rests on.
 */
function releaseSchedule(): { every: number; next: number } {
  return { every: RELEASE_EVERY_MS, next: Date.now() + untilNextTick(RELEASE_EVERY_MS) };
}

test.serial(
  "the worker empties an earlier version's release queue: no job waits for a worker that is gone",
  async (t) => {
    await runningWorker();
    const sending = createQueue(w.p.config, queues.sending);
    try {
      t.is(await sending.getJobScheduler('release'), undefined);
      const counts = await sending.getJobCounts('waiting', 'delayed', 'active', 'paused', 'prioritized');
      t.deepEqual(counts, { waiting: 0, delayed: 0, active: 0, paused: 0, prioritized: 0 });
    } finally {
      await sending.close();
    }
  },
);

test.serial('an email scheduled 3 s ahead is released within 1 s of scheduled_at, then delivered', async (t) => {
  t.timeout(180_000);
  await runningWorker();
  const { every, next } = releaseSchedule();
  t.true(every <= 1000, `the release runs every ${every} ms: an email could wait longer than 1 s`);
  // Half a period after a run, about 3 s ahead: the release then shows the run's own delay, with half a period
  // of room for a busy machine, instead of landing by chance next to a run and measuring the run's jitter.
  let at = next + every / 2;
  while (at < Date.now() + 3000) at += every;
  const when = new Date(at);
  const id = await schedule('ann@later-inbox.test', when.toISOString());
  let row = await emailRow(id);
  t.is(row.status, 'scheduled');
  t.is(row.scheduled_at.getTime(), when.getTime());
  t.is(
    (await recipientsOf(w.p.db, id)).get('ann@later-inbox.test')?.next_attempt_at?.getTime(),
    when.getTime(),
    'due at its time',
  );
  t.deepEqual(await deliverJobs(id), [], 'not handed to the MTA before its time');

  row = await waitForRow(id, (r) => r.status !== 'scheduled');
  t.not(row.status, 'canceled');
  const delay = releasedMs(row);
  t.log(`released ${delay} ms after scheduled_at`);
  t.true(delay >= 0, `released ${-delay} ms before its time`);
  t.true(delay <= 1000, `released ${delay} ms after scheduled_at`);
  const [job, ...more] = await enqueuedJobs(id);
  t.is(more.length, 0);
  t.is(job?.id, id, 'its deliver job is enqueued');
  t.true(
    job.timestamp >= row.updated_at.getTime() - 5 && job.timestamp <= row.updated_at.getTime() + 5000,
    'enqueued by the release',
  );

  await processDelivery(w.deps, id);
  t.is((await recipientsOf(w.p.db, id)).get('ann@later-inbox.test')?.status, 'delivered');
  t.is(w.sink.deliveredTo('ann@later-inbox.test').length, 1);
  t.is((await w.p.request('GET', `/emails/${id}`, { key: team.key })).body.last_event, 'delivered');
  const types = (await eventsOf(w.p.db, id)).map((e) => e.type);
  t.is(types.filter((type) => type === 'email.scheduled').length, 1);
  t.is(types.filter((type) => type === 'email.delivered').length, 1);
  await assertNoRepeatedEvents(t, id);
});

test.serial(
  'reschedule records email.scheduled again and releases at the new time; a canceled email is never released',
  async (t) => {
    t.timeout(180_000);
    await runningWorker();
    // Canceled before its time: the worker must pass it by.
    const canceledAt = new Date(Date.now() + 4000);
    const canceledId = await schedule('cy@later-inbox.test', canceledAt.toISOString());
    const cancel = await w.p.request('POST', `/emails/${canceledId}/cancel`, { key: team.key });
    t.is(cancel.status, 200, cancel.text);
    t.deepEqual(cancel.body, { object: 'email', id: canceledId });
    const canceledRow = await emailRow(canceledId);
    t.like(canceledRow, { status: 'canceled', last_event: 'canceled' });
    t.true(canceledRow.updated_at.getTime() < canceledAt.getTime(), 'canceled before its time');
    t.deepEqual(
      (await eventsOf(w.p.db, canceledId)).map((e) => e.type),
      ['email.scheduled', 'email.canceled'],
    );
    const canceledEvent = await w.p
      .db('events')
      .where({ team_id: team.id, type: 'email.canceled' })
      .whereRaw(`data->>'email_id' = ?`, [canceledId])
      .first();
    t.like(canceledEvent?.data, { email_id: canceledId, to: ['cy@later-inbox.test'], subject: 'Later' });

    // Scheduled an hour ahead, then moved to a few seconds ahead: due after the canceled one.
    const movedId = await schedule('mo@later-inbox.test', 'in 1 hour');
    t.true((await emailRow(movedId)).scheduled_at.getTime() > Date.now() + 3500_000);
    const patched = await w.p.request('PATCH', `/emails/${movedId}`, {
      key: team.key,
      body: { scheduled_at: 'IN 5 SECONDS' },
    });
    t.is(patched.status, 200, patched.text);
    t.deepEqual(patched.body, { object: 'email', id: movedId });
    const moved = await emailRow(movedId);
    t.is(moved.status, 'scheduled');
    t.true(Math.abs(moved.scheduled_at.getTime() - (Date.now() + 5000)) < 3000, 'moved to about 5 s ahead');
    t.true(moved.scheduled_at.getTime() > canceledAt.getTime(), 'due after the canceled one');
    t.is(
      (await recipientsOf(w.p.db, movedId)).get('mo@later-inbox.test')?.next_attempt_at?.getTime(),
      moved.scheduled_at.getTime(),
      'its recipient is due at the new time',
    );
    const scheduledEvents = await w.p
      .db('events')
      .where({ team_id: team.id, type: 'email.scheduled' })
      .whereRaw(`data->>'email_id' = ?`, [movedId]);
    t.is(scheduledEvents.length, 2, 'one at acceptance, one for the reschedule');
    t.like(scheduledEvents[1].data, { email_id: movedId, to: ['mo@later-inbox.test'] });

    // The worker releases the moved email at its new time: it has run its release after the canceled one was due.
    const released = await waitForRow(movedId, (r) => r.status !== 'scheduled');
    const delay = releasedMs(released);
    t.log(`rescheduled email released ${delay} ms after its new scheduled_at`);
    // At the new time (the 1 s bound is the first test's; this one lands at any phase of the release runs).
    t.true(delay >= 0 && delay <= 5000, `released ${delay} ms after scheduled_at`);
    t.true(released.updated_at.getTime() > canceledAt.getTime());
    // Two more release runs past both times.
    await sleep(Math.max(0, released.updated_at.getTime() + 2500 - Date.now()));

    const still = await emailRow(canceledId);
    t.like(still, { status: 'canceled', last_event: 'canceled' });
    t.is(still.updated_at.getTime(), canceledRow.updated_at.getTime(), 'not touched since the cancel');
    t.is((await recipientsOf(w.p.db, canceledId)).get('cy@later-inbox.test')?.status, 'canceled');
    t.deepEqual(await deliverJobs(canceledId), [], 'never handed to the MTA');
    t.deepEqual(
      (await eventsOf(w.p.db, canceledId)).map((e) => e.type),
      ['email.scheduled', 'email.canceled'],
    );
    t.is((await w.p.request('GET', `/emails/${canceledId}`, { key: team.key })).body.last_event, 'canceled');
    // Neither can change any more.
    t.is(
      (await w.p.request('PATCH', `/emails/${canceledId}`, { key: team.key, body: { scheduled_at: 'in 1 hour' } }))
        .status,
      422,
    );
    t.is((await w.p.request('POST', `/emails/${movedId}/cancel`, { key: team.key })).status, 422);

    await processDelivery(w.deps, canceledId);
    t.is(w.sink.deliveredTo('cy@later-inbox.test').length, 0, 'even a stray deliver job sends nothing');
    await processDelivery(w.deps, movedId);
    t.is(w.sink.deliveredTo('mo@later-inbox.test').length, 1);
  },
);

test.serial(
  'a worker killed (SIGKILL) before the time and started after it releases the email at once, exactly once',
  async (t) => {
    t.timeout(300_000);
    const before = await runningWorker();
    const when = new Date(Date.now() + 5000);
    const id = await schedule('kim@later-inbox.test', when.toISOString());
    process.kill(before.pid, 'SIGKILL');
    await before.stop();
    worker = null;
    t.true(Date.now() < when.getTime(), 'killed before the email was due');
    t.notRegex(before.output(), /"msg":"process\.stopped"/, 'killed, not stopped cleanly');

    // Its time passes with no worker: nobody releases it.
    await sleep(when.getTime() + 2000 - Date.now());
    t.is((await emailRow(id)).status, 'scheduled');

    const { proc, spawnedAt, startedAt } = await startWorker();
    t.log(`the worker took ${startedAt - spawnedAt} ms to start`);
    const row = await waitForRow(id, (r) => r.status !== 'scheduled');
    const releasedAt = row.updated_at.getTime();
    t.log(`released ${releasedAt - startedAt} ms after the worker said it started`);
    t.true(releasedAt >= spawnedAt, 'released by the new worker');
    t.true(releasedAt <= startedAt + 3000, `released ${releasedAt - startedAt} ms after the worker started`);

    // Several more release runs: nothing changes, one deliver job.
    await sleep(Math.max(0, releasedAt + 3000 - Date.now()));
    const later = await emailRow(id);
    t.is(later.status, row.status);
    t.is(later.updated_at.getTime(), releasedAt, 'released once');
    const jobs = await deliverJobs(id);
    t.deepEqual(
      jobs.map((j) => j.id),
      [id],
    );
    t.notRegex(proc.output(), /"msg":"job\.failed"/);

    await processDelivery(w.deps, id);
    t.is((await processDelivery(w.deps, id)).leased, 0, 'a second run of its job finds nothing to do');
    t.is(w.sink.deliveredTo('kim@later-inbox.test').length, 1, 'one copy');
    t.is((await recipientsOf(w.p.db, id)).get('kim@later-inbox.test')?.status, 'delivered');
    t.is((await w.p.request('GET', `/emails/${id}`, { key: team.key })).body.last_event, 'delivered');
    await assertNoRepeatedEvents(t, id);
  },
);
