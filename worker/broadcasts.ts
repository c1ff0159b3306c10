// Broadcast fan-outs in the worker (shared/broadcasts/fanout.ts): a sweep every second (a tick of each worker copy:
// shared/ticker.ts) hands each broadcast with work to do (queued, scheduled and due, or sending under a lease that ran
// out) to a job whose id is the broadcast's, so a broadcast has one job at a time however often it is swept. A worker
// killed mid-run loses nothing: its lease runs out and the next sweep's job resumes from the committed cursor.
import type { Knex } from 'knex';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import { createQueue, createWorker, queues } from '../shared/queue.ts';
import { ticker } from '../shared/ticker.ts';
import { deliveryEnqueuer } from '../shared/emails/enqueue.ts';
import { dueBroadcasts, runBroadcast } from '../shared/broadcasts/fanout.ts';

export const BROADCAST_SWEEP_MS = 1000;
/** A run's hold on its broadcast without committing a batch; a killed run's broadcast resumes after this. */
export const BROADCAST_LEASE_MS = 15_000;
/** How often a fan-out waiting on the mta's backlog looks again (and renews its lease). */
const BACKLOG_POLL_MS = 250;

export async function startBroadcastJobs(deps: { config: Config; db: Knex; log: Logger; secrets: Buffer }) {
  const { config, db, log } = deps;
  const queue = createQueue(config, queues.broadcasts);
  const bulk = createQueue(config, queues.deliverBulk);
  // Earlier versions swept in a job of the queue's scheduler.
  await queue.removeJobScheduler('sweep');
  const sweep = ticker({
    name: 'broadcasts',
    everyMs: BROADCAST_SWEEP_MS,
    log,
    async run() {
      const ids = await dueBroadcasts(db, new Date());
      if (ids.length)
        await queue.addBulk(
          ids.map((broadcastId) => ({
            name: 'fanout',
            data: { broadcastId },
            opts: { jobId: `broadcast-${broadcastId}`, removeOnComplete: true, removeOnFail: true, attempts: 1 },
          })),
        );
    },
  });
  const stopping = new AbortController();
  const enqueue = deliveryEnqueuer(bulk, log);
  const fanout = {
    db,
    log,
    enqueue,
    secrets: deps.secrets,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    batchSize: config.BROADCAST_BATCH_SIZE,
    backlog: { waiting: () => bulk.getWaitingCount(), max: config.BROADCAST_MAX_BACKLOG, pollMs: BACKLOG_POLL_MS },
    leaseMs: BROADCAST_LEASE_MS,
    signal: stopping.signal,
  };
  const worker = createWorker(
    config,
    queues.broadcasts,
    async (job) => {
      // A sweep job an earlier version's scheduler made due before this start (the sweep now ticks) has no work.
      if (job.name !== 'fanout') return { skipped: job.name };
      return { outcome: await runBroadcast(fanout, String(job.data.broadcastId)) };
    },
    { concurrency: 3, lockDuration: 20_000, stalledInterval: 10_000, maxStalledCount: 1000 },
  );
  sweep.start();
  return {
    workers: [worker],
    /** The fan-outs' own queue, for the queue gauges (the bulk queue's are the mta's). */
    fanoutQueue: queue,
    queues: [queue, bulk],
    /** Stops the sweep and running fan-outs after their batch in hand (call before closing the workers). */
    async stop() {
      stopping.abort();
      await sweep.stop();
    },
    flush: () => enqueue.flush(),
  };
}
