// Housekeeping run on a schedule: forget idempotency keys past 24 h and request logs past the retention window,
// remove dropped received records past their team's data retention window (spec, Receiving), delete contact
// import files seven days after their import finished (spec, Contact imports) and upload files no import names a day
// after they were written, delete open and click hits and metrics counters past their retention windows
// (shared/email-metrics/retention.ts), delete the OAuth server's expired rows (codes, tokens, sessions,
// interactions past their expiry: shared/oauth/adapter.ts), and count every team's billable
// contact peak (shared/contacts/billable.ts).
import type { Knex } from 'knex';
import type { BlobStore } from '../shared/blobs.ts';
import { purgeExpired } from '../shared/idempotency/store.ts';
import { purgeAgedDropped } from '../shared/receiving/delete.ts';
import { countAllPeaks, deleteOldUploads, deleteOrphanUploads } from '../shared/imports/maintenance.ts';
import { pruneTracking, type RetentionSettings } from '../shared/email-metrics/retention.ts';
import { deleteExpiredOAuthRows } from '../shared/oauth/adapter.ts';

export const LOG_RETENTION_DAYS = 30;

export interface Removed {
  idempotency_keys: number;
  request_logs: number;
  dropped_received: number;
  contact_import_files: number;
  /** Upload files no import names, a day old (an api that crashed mid-upload). */
  orphan_upload_files: number;
  /** Open and click hits past ENGAGEMENT_RETENTION_DAYS. */
  email_engagements: number;
  /** Metrics counter rows past METRICS_RETENTION_DAYS. */
  email_metric_rows: number;
  /** The OAuth server's rows (codes, tokens, sessions, interactions) past their expiry. */
  oauth_rows: number;
  /** Teams whose billable peak was counted (nothing removed). */
  contact_peaks_counted: number;
}

/** The retention windows when none are given (the settings' defaults). */
export const DEFAULT_RETENTION: RetentionSettings = { ENGAGEMENT_RETENTION_DAYS: 90, METRICS_RETENTION_DAYS: 400 };

export async function runMaintenance(
  db: Knex,
  blobs: BlobStore,
  now = new Date(),
  retention: RetentionSettings = DEFAULT_RETENTION,
): Promise<Removed> {
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
  let contact_import_files = 0;
  for (let round = 0; round < 20; round++) {
    const n = await deleteOldUploads(db, blobs, now);
    contact_import_files += n;
    if (n === 0) break;
  }
  const orphan_upload_files = await deleteOrphanUploads(db, blobs, now);
  const { email_engagements, email_metric_rows } = await pruneTracking(db, retention, now);
  const oauth_rows = await deleteExpiredOAuthRows(db, now);
  const contact_peaks_counted = await countAllPeaks(db, now);
  return {
    oauth_rows,
    email_engagements,
    email_metric_rows,
    idempotency_keys,
    request_logs,
    dropped_received,
    contact_import_files,
    orphan_upload_files,
    contact_peaks_counted,
  };
}
