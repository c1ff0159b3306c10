// Housekeeping run on a schedule: forget idempotency keys past 24 h and request logs past the retention window,
// remove dropped received records past their team's data retention window (spec, Receiving), delete contact
// import files seven days after their import finished (spec, Contact imports) and upload files no import names a day
// after they were written, and count every team's billable
// contact peak (shared/contacts/billable.ts).
import type { Knex } from 'knex';
import type { BlobStore } from '../shared/blobs.ts';
import { purgeExpired } from '../shared/idempotency/store.ts';
import { purgeAgedDropped } from '../shared/receiving/delete.ts';
import { countAllPeaks, deleteOldUploads, deleteOrphanUploads } from '../shared/imports/maintenance.ts';

export const LOG_RETENTION_DAYS = 30;

export interface Removed {
  idempotency_keys: number;
  request_logs: number;
  dropped_received: number;
  contact_import_files: number;
  /** Upload files no import names, a day old (an api that crashed mid-upload). */
  orphan_upload_files: number;
  /** Teams whose billable peak was counted (nothing removed). */
  contact_peaks_counted: number;
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
  let contact_import_files = 0;
  for (let round = 0; round < 20; round++) {
    const n = await deleteOldUploads(db, blobs, now);
    contact_import_files += n;
    if (n === 0) break;
  }
  const orphan_upload_files = await deleteOrphanUploads(db, blobs, now);
  const contact_peaks_counted = await countAllPeaks(db, now);
  return {
    idempotency_keys,
    request_logs,
    dropped_received,
    contact_import_files,
    orphan_upload_files,
    contact_peaks_counted,
  };
}
