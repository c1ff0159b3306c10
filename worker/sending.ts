// Scheduled sends: released (status scheduled → queued) once their time has come, then handed to the MTA.
import type { Knex } from 'knex';
import { releaseDue } from '../shared/emails/store.ts';
import type { EnqueueDelivery } from '../shared/emails/enqueue.ts';

/** Releases every email due at `now`, a batch at a time (a full batch means more may be waiting). */
export async function releaseScheduled(
  db: Knex,
  enqueue: EnqueueDelivery,
  now = new Date(),
  batch = 500,
): Promise<number> {
  let released = 0;
  for (;;) {
    const ids = await releaseDue(db, now, batch);
    await enqueue(ids);
    released += ids.length;
    if (ids.length < batch) return released;
  }
}
