// Housekeeping run on a schedule: forget idempotency keys past 24 h and request logs past the retention window,
// and remove dropped received records past their team's data retention window (spec, Receiving).
import type { Knex } from 'knex';
import type { BlobStore } from '../shared/blobs.ts';
import { purgeExpired } from '../shared/idempotency/store.ts';
import { purgeAgedDropped } from '../shared/receiving/delete.ts';

export const LOG_RETENTION_DAYS = 30;

export interface Removed {
  idempotency_keys: number;
  request_logs: number;
  dropped_received: number;
}

export async function runMaintenance(db: Knex, blobs: BlobStore, now = new Date()): Promise<Removed> {
  const idempotency_keys = await purgeExpired(db, now);
  const cutoff = new Date(now.getTime() - LOG_RETENTION_DAYS * 24 * 3600 * 1000);
  const request_logs = await db('request_logs').where('created_at', '<', cutoff).delete();
  // In bounded rounds: a large backlog (a first run, a shortened window) goes over several runs of the hour.
  let dropped_received = 0;
  for (let round = 0; round < 20; round++) {
    const n = await purgeAgedDropped(db, blobs, now);
    dropped_received += n;
    if (n === 0) break;
  }
  return { idempotency_keys, request_logs, dropped_received };
}
