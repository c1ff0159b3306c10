// Housekeeping run on a schedule: forget idempotency keys past 24 h and request logs past the retention window.
import type { Knex } from 'knex';
import { purgeExpired } from '../shared/idempotency/store.ts';

export const LOG_RETENTION_DAYS = 30;

export async function runMaintenance(db: Knex, now = new Date()): Promise<{ idempotency_keys: number; request_logs: number }> {
  const idempotency_keys = await purgeExpired(db, now);
  const cutoff = new Date(now.getTime() - LOG_RETENTION_DAYS * 24 * 3600 * 1000);
  const request_logs = await db('request_logs').where('created_at', '<', cutoff).delete();
  return { idempotency_keys, request_logs };
}
