// The contact area's jobs in the worker: imports (shared/imports/run.ts), each team's billable peak after its
// contacts changed, and the sweep that re-enqueues imports whose job was lost. An import job resumes from its
// committed offset, so a worker killed mid-import loses nothing: BullMQ hands the job (its lock no longer renewed)
// to a live worker within IMPORT_LOCK_MS + IMPORT_STALLED_CHECK_MS, and the run skips what was committed.
import type { Knex } from 'knex';
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
  const runDeps = { db, blobs, log, batchRows: config.CONTACT_IMPORT_BATCH_ROWS };
  const imports = createWorker(
    config,
    queues.contactImports,
    async (job) => {
      const importId: string = job.data.importId;
      try {
        return { outcome: await runImport(runDeps, importId) };
      } catch (err) {
        const attempt = job.attemptsMade + 1;
        log.error({ err, importId, attempt }, 'contact_import.error');
        if (attempt < (job.opts.attempts ?? 1)) throw err;
        await failImport(db, importId, `the import stopped after ${attempt} tries (the rows before were imported)`);
        return { outcome: 'failed' };
      }
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
  return { workers: [imports, housekeeping], queues: [importsQueue, housekeepingQueue] };
}
