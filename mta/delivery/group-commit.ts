// Group commit of attempt outcomes (batched.ts): records that arrive while the previous transaction is committing
// wait and go together in the next one (record.ts writes any number in four statements; a lone one-recipient record
// in one), so under load a delivery costs a fraction of a transaction and of a WAL flush, and alone it waits for
// nothing. One transaction at a time per process. A failed batch is retried one record per transaction, so one bad
// record (or a deadlock with another mta copy) fails only its own job. The outcome is durable when record() resolves,
// as before: the wait only lengthens the 250-to-commit window (mta/README.md) by the commit in progress.
import type { Knex } from 'knex';
import type { Logger } from '../../shared/logger.ts';
import { recordAttempts, type PendingRecord, type Recorded } from './record.ts';
import { batched } from './batched.ts';

/** At most this many attempts in one transaction (the statements carry them as JSON). */
const MAX_BATCH = 200;

/** Resolves once committed, with what was written (the recipients whose lease the job still held). */
export type RecordFn = (record: PendingRecord) => Promise<Recorded[]>;

export function createGroupCommit(deps: { db: Knex; log: Logger }, maxBatch = MAX_BATCH): RecordFn {
  return batched<PendingRecord, Recorded[]>({
    run: (records) => recordAttempts(deps, records),
    max: maxBatch,
    log: deps.log,
    failedEvent: 'delivery.group_commit_failed',
  });
}
