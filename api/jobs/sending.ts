// Scheduled sends: released (status scheduled → queued) once their time has come, then handed to the MTA.
import type { Knex } from 'knex';
import { releaseDue } from '../../shared/emails/store.ts';
import type { EnqueueDelivery } from '../../shared/emails/enqueue.ts';

export async function releaseScheduled(db: Knex, enqueue: EnqueueDelivery, now = new Date()): Promise<number> {
  const ids = await releaseDue(db, now);
  await enqueue(ids);
  return ids.length;
}
