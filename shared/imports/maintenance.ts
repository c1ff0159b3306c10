// The contact area's housekeeping in the worker: re-enqueueing imports whose job was lost (a crash between the api's
// commit and its enqueue, a Redis that forgot), deleting an import's file seven days after it finished (interface
// spec, Contact imports, row rule 4; the import and its counts stay), deleting upload files no import names a day
// after they were written (an api that crashed or was killed mid-upload, or between storing the file and committing
// its import: a refused upload removes its own file), and counting every team's billable peak once
// an hour (changes no job reported: suppressions, the unsubscribe page).
import type { Knex } from 'knex';
import type { Queue } from 'bullmq';
import type { BlobStore } from '../blobs.ts';
import { billableCount, recordPeak } from '../contacts/billable.ts';
import { importJob } from './jobs.ts';

export const SWEEP_EVERY_MS = 30_000;
/** An unfinished import that has not moved for this long gets its job again (a no-op while the job exists). */
export const STALE_AFTER_MS = 30_000;
export const UPLOAD_KEPT_DAYS = 7;
/** An upload file no import names is deleted once it is this old: no upload takes that long. */
export const ORPHAN_UPLOAD_HOURS = 24;

/** An upload's key (importBlobKey) or its unfinished write's temporary file: the import's id. */
const UPLOAD_KEY = /^imports\/[0-9a-f-]{36}\/([0-9a-f-]{36})\.csv(\.[0-9a-f]+\.tmp)?$/;

/** Deletes upload files older than ORPHAN_UPLOAD_HOURS that no import names (at most `limit`); answers how many. */
export async function deleteOrphanUploads(db: Knex, blobs: BlobStore, now = new Date(), limit = 1000) {
  const cutoff = now.getTime() - ORPHAN_UPLOAD_HOURS * 3600 * 1000;
  const old = (await blobs.list('imports')).filter((b) => b.modified.getTime() < cutoff).slice(0, limit);
  const finished = old.filter((b) => UPLOAD_KEY.exec(b.key) && !b.key.endsWith('.tmp')).map((b) => b.key);
  const named = new Set<string>(
    finished.length ? ((await db('contact_imports').whereIn('blob_key', finished).pluck('blob_key')) as string[]) : [],
  );
  let removed = 0;
  for (const b of old) {
    // A key of another shape is not an upload of ours: left alone.
    if (!UPLOAD_KEY.test(b.key) || named.has(b.key)) continue;
    await blobs.delete(b.key);
    removed++;
  }
  return removed;
}

export async function sweepImports(db: Knex, queue: Queue, now = new Date()): Promise<number> {
  const rows: { id: string }[] = await db('contact_imports')
    .whereIn('status', ['queued', 'in_progress'])
    .where('updated_at', '<', new Date(now.getTime() - STALE_AFTER_MS))
    .orderBy('created_at')
    .limit(100)
    .select('id');
  if (rows.length) await queue.addBulk(rows.map((r) => importJob(r.id)));
  return rows.length;
}

/** Deletes the files of imports finished more than seven days before `now`; answers how many. */
export async function deleteOldUploads(db: Knex, blobs: BlobStore, now = new Date(), limit = 500): Promise<number> {
  const cutoff = new Date(now.getTime() - UPLOAD_KEPT_DAYS * 24 * 3600 * 1000);
  const rows: { id: string; blob_key: string }[] = await db('contact_imports')
    .whereNotNull('blob_key')
    .where('completed_at', '<', cutoff)
    .orderBy('completed_at')
    .limit(limit)
    .select('id', 'blob_key');
  for (const r of rows) {
    await blobs.delete(r.blob_key);
    await db('contact_imports').where({ id: r.id }).update({ blob_key: null, file_deleted_at: now });
  }
  return rows.length;
}

/** Counts the billable contacts of every team that has contacts, raising each period's peak; answers how many teams. */
export async function countAllPeaks(db: Knex, now = new Date()): Promise<number> {
  const teams: { id: string }[] = await db('teams as t')
    .whereExists(db('contacts as c').whereRaw('c.team_id = t.id').select(db.raw('1')))
    .select('t.id');
  for (const t of teams) await recordPeak(db, t.id, await billableCount(db, t.id), now);
  return teams.length;
}
