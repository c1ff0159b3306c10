// Group commit of attempt outcomes: records that arrive while the previous transaction is committing wait and go
// together in the next one (record.ts writes any number in four statements; a lone one-recipient record in one), so
// under load a delivery costs a fraction of a transaction and of a WAL flush, and alone it waits for nothing. One
// transaction at a time per process. A failed batch is retried one record per transaction, so one bad record (or a
// deadlock with another mta copy) fails only its own job. The outcome is durable when record() resolves, as before:
// the wait only lengthens the 250-to-commit window (mta/README.md) by the commit in progress.
import type { Knex } from 'knex';
import type { Logger } from '../../shared/logger.ts';
import { recordAttempts, type PendingRecord, type Recorded } from './record.ts';

/** At most this many attempts in one transaction (the statements carry them as JSON). */
const MAX_BATCH = 200;

interface Waiting extends PendingRecord {
  resolve: (recorded: Recorded[]) => void;
  reject: (err: unknown) => void;
}

/** Resolves once committed, with what was written (the recipients whose lease the job still held). */
export type RecordFn = (record: PendingRecord) => Promise<Recorded[]>;

export function createGroupCommit(deps: { db: Knex; log: Logger }, maxBatch = MAX_BATCH): RecordFn {
  const queue: Waiting[] = [];
  // Set from the first record of a batch until its transaction ends: the records of the same turn of the event
  // loop (setImmediate) and those arriving during a commit join the next batch.
  let flushing = false;

  async function flush(): Promise<void> {
    try {
      while (queue.length) {
        const batch = queue.splice(0, maxBatch);
        try {
          const recorded = await recordAttempts(deps, batch);
          batch.forEach((w, i) => w.resolve(recorded[i]));
        } catch (err) {
          if (batch.length === 1) {
            batch[0].reject(err);
            continue;
          }
          deps.log.warn({ err, records: batch.length }, 'delivery.group_commit_failed');
          for (const w of batch) await recordAttempts(deps, [w]).then(([recorded]) => w.resolve(recorded), w.reject);
        }
      }
    } finally {
      flushing = false;
    }
  }

  return (record) =>
    new Promise<Recorded[]>((resolve, reject) => {
      queue.push({ ...record, resolve, reject });
      if (flushing) return;
      flushing = true;
      setImmediate(() => void flush());
    });
}
