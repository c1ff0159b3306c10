// The contact area's jobs, as the api (and anything else) hands them over after a commit: an import to run (job id
// = the import's id, so handing it over twice is harmless) and a team whose contacts changed (its billable peak
// is counted again within USAGE_DEBOUNCE_MS, once however many changes came meanwhile). A failed hand-over loses
// nothing: the worker's sweep re-enqueues unfinished imports, and its hourly maintenance counts every team's peak.
import type { Queue } from 'bullmq';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { closeQueues, createQueue, queues } from '../queue.ts';

export const USAGE_DEBOUNCE_MS = 10_000;

/** The job options of an import: retried from its committed offset on an error, gone from Redis once done. */
export function importJob(importId: string) {
  return {
    name: 'import',
    data: { importId },
    opts: {
      jobId: importId,
      attempts: 8,
      backoff: { type: 'exponential', delay: 2000 },
      removeOnComplete: true,
      removeOnFail: true,
    },
  };
}

/** One job per team per window: the changes of a window are counted once, at its end. */
export function usageJob(teamId: string, now = Date.now()) {
  const window = Math.floor(now / USAGE_DEBOUNCE_MS);
  return {
    name: 'usage',
    data: { teamId },
    opts: {
      jobId: `usage-${teamId}-${window}`,
      delay: (window + 1) * USAGE_DEBOUNCE_MS - now,
      removeOnComplete: true,
      removeOnFail: 100,
    },
  };
}

export interface ContactJobs {
  importQueued(importId: string): Promise<void>;
  contactsChanged(teamId: string): Promise<void>;
  close(): Promise<void>;
}

export function contactJobs(config: Config, log: Logger): ContactJobs {
  const imports: Queue = createQueue(config, queues.contactImports);
  const housekeeping: Queue = createQueue(config, queues.contacts);
  return {
    async importQueued(importId) {
      const job = importJob(importId);
      await imports.add(job.name, job.data, job.opts).catch((err) => {
        log.warn({ err, importId }, 'contact_import.enqueue_failed');
      });
    },
    async contactsChanged(teamId) {
      const job = usageJob(teamId);
      await housekeeping.add(job.name, job.data, job.opts).catch((err) => {
        log.warn({ err, teamId }, 'contact_usage.enqueue_failed');
      });
    },
    async close() {
      await closeQueues([imports, housekeeping]);
    },
  };
}
