// The contact area's jobs in the worker: imports (shared/imports/run.ts), each team's billable peak after its
// contacts changed, and the sweep that re-enqueues imports whose job was lost. An import job resumes from its
// committed offset, so a worker killed mid-import loses nothing: BullMQ hands the job (its lock no longer renewed)
// to a live worker within IMPORT_LOCK_MS + IMPORT_STALLED_CHECK_MS, and the run skips what was committed.
import type { Knex } from 'knex';
import { DelayedError } from 'bullmq';
import type { Config } from '../shared/config.ts';
import type { BlobStore } from '../shared/blobs.ts';
import type { Logger } from '../shared/logger.ts';
import { createQueue, createWorker, queues } from '../shared/queue.ts';
import { failImport, runImport } from '../shared/imports/run.ts';
import { billableCount, recordPeak } from '../shared/contacts/billable.ts';
import { SWEEP_EVERY_MS, sweepImports } from '../shared/imports/maintenance.ts';

const IMPORT_LOCK_MS = 20_000;
const IMPORT_STALLED_CHECK_MS = 10_000;

export async function startContactJobs(deps: { config: Config; db: Knex; blobs: BlobStore; log: Logger }) {
  const { config, db, blobs, log } = deps;
  const importsQueue = createQueue(config, queues.contactImports);
  const housekeepingQueue = createQueue(config, queues.contacts);
  await housekeepingQueue.upsertJobScheduler(
    'import-sweep',
    { every: SWEEP_EVERY_MS },
    { name: 'sweep', data: {}, opts: { removeOnComplete: true, removeOnFail: 100 } },
  );
  // Stopping the process pauses a running import after its batches in hand, instead of waiting for its end.
  const stopping = new AbortController();
  const runDeps = { db, blobs, log, batchRows: config.CONTACT_IMPORT_BATCH_ROWS, signal: stopping.signal };
  const imports = createWorker(
    config,
    queues.contactImports,
    async (job, token) => {
      const importId: string = job.data.importId;
      let outcome;
      try {
        outcome = await runImport(runDeps, importId);
      } catch (err) {
        const attempt = job.attemptsMade + 1;
        log.error({ err, importId, attempt }, 'contact_import.error');
        if (attempt < (job.opts.attempts ?? 1)) throw err;
        await failImport(db, importId, `the import stopped after ${attempt} tries (the rows before were imported)`);
        return { outcome: 'failed' };
      }
      if (outcome === 'paused') {
        // Back to the queue at once, no try counted: the next worker resumes at the committed offset.
        await job.moveToDelayed(Date.now(), token);
        throw new DelayedError();
      }
      return { outcome };
    },
    {
      concurrency: config.CONTACT_IMPORT_CONCURRENCY,
      lockDuration: IMPORT_LOCK_MS,
      stalledInterval: IMPORT_STALLED_CHECK_MS,
      // A resumable job may be picked up again however often its worker dies.
      maxStalledCount: 1000,
    },
  );
  const housekeeping = createWorker(config, queues.contacts, async (job) => {
    if (job.name === 'sweep') return { enqueued: await sweepImports(db, importsQueue) };
    const teamId: string = job.data.teamId;
    return { peak: await recordPeak(db, teamId, await billableCount(db, teamId)) };
  });
  return {
    workers: [imports, housekeeping],
    queues: [importsQueue, housekeepingQueue],
    /** Pauses running imports (call before closing the workers). */
    stop: () => stopping.abort(),
  };
}
