// The worker's run of one import (job data {importId}): reads the stored file as a stream, one record at a time,
// and writes it in batches (shared/imports/batch.ts), each in one transaction with the import's progress (row
// offset and counts) and its kept failures. A run that starts again after a crash skips the rows the committed
// offset covers, so nothing is created or counted twice; a second run of the same import at the same moment finds
// the offset moved under it and stops. The last transaction completes the import and records its one audit entry.
import type { Knex } from 'knex';
import type pg from 'pg';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CsvError } from 'csv-parse';
import type { BlobStore } from '../blobs.ts';
import type { Logger } from '../logger.ts';
import { recordAudit } from '../audit/audit.ts';
import { lockAllowance } from '../contacts/allowance.ts';
import { billableCount, recordPeak } from '../contacts/billable.ts';
import { propertyTypesOf } from '../contacts/properties.ts';
import { writeBatch, type BatchFailure, type BatchRow, type WriteMode } from './batch.ts';
import { FAILURES_KEPT } from './limits.ts';
import { csvParser } from './parse.ts';
import { readRow } from './rows.ts';
import { WriteQueue } from './write-queue.ts';
import type { ImportRow } from './store.ts';

export interface ImportRunDeps {
  db: Knex;
  blobs: BlobStore;
  log: Logger;
  /** Rows a batch (one transaction) writes. */
  batchRows: number;
  /** Aborted when the process stops: the run ends after the batches it has read, to be resumed by another. */
  signal?: AbortSignal;
}

export type RunOutcome = 'completed' | 'failed' | 'superseded' | 'finished already' | 'paused';

/** Another run moved the import on: this one stops without writing. */
class Superseded extends Error {}

const ERROR_MAX_LENGTH = 1000;
/** Batches read ahead of the one being written (memory: a few batches of rows). */
const READ_AHEAD_BATCHES = 2;

/** Moves a queued import to in_progress (or finds it there after a crash); null when it is finished or gone. */
async function claim(db: Knex, importId: string): Promise<ImportRow | null> {
  const [row] = await db<ImportRow>('contact_imports')
    .where({ id: importId })
    .whereIn('status', ['queued', 'in_progress'])
    .update({
      status: 'in_progress',
      started_at: db.raw('coalesce(started_at, now())') as never,
      updated_at: db.fn.now() as never,
    })
    .returning('*');
  return row ?? null;
}

/** Locks the import's row and checks this run still owns its progress at `offset`. */
async function own(trx: Knex, imp: ImportRow, offset: number) {
  const cur = await trx('contact_imports').where({ id: imp.id }).forUpdate().first('row_offset', 'status', 'failed');
  if (!cur || cur.status !== 'in_progress' || cur.row_offset !== offset) throw new Superseded();
  return cur as { failed: number };
}

/** Locks what the batch names (against deletion until it commits); answers the mapped property keys deleted. */
async function lockReferences(trx: Knex, imp: ImportRow): Promise<Set<string>> {
  const keys = imp.column_map.properties.map((p) => p.key);
  const types = await propertyTypesOf(trx, imp.team_id, keys);
  if (imp.segment_ids.length)
    await trx('segments').where({ team_id: imp.team_id }).whereIn('id', imp.segment_ids).forKeyShare().select('id');
  if (imp.topics.length)
    await trx('topics')
      .where({ team_id: imp.team_id })
      .whereIn(
        'id',
        imp.topics.map((t) => t.id),
      )
      .forKeyShare()
      .select('id');
  return new Set(keys.filter((k) => !types.has(k)));
}

async function writeAndAdvance(
  db: Knex,
  conn: pg.ClientBase,
  imp: ImportRow,
  rows: BatchRow[],
  offset: number,
  mode: WriteMode,
): Promise<void> {
  await db.transaction(
    async (trx) => {
      // A batch's commit need not wait for its WAL flush: should PostgreSQL itself crash, the last batches are lost
      // together with the offset that covers them, and the resumed run writes them again.
      await trx.raw('set local synchronous_commit = off');
      const cur = await own(trx, imp, offset);
      const included = await lockAllowance(trx, imp.team_id);
      const gone = await lockReferences(trx, imp);
      const out = await writeBatch(trx, conn, imp, rows, included, gone, mode);
      const kept = out.failures.slice(0, Math.max(0, FAILURES_KEPT - cur.failed));
      if (kept.length) await trx('contact_import_failures').insert(kept.map((f) => failureRow(imp.id, f)));
      await trx('contact_imports')
        .where({ id: imp.id })
        .update({
          row_offset: offset + rows.length,
          created: trx.raw('created + ?', [out.created]),
          updated: trx.raw('updated + ?', [out.updated]),
          skipped: trx.raw('skipped + ?', [out.skipped]),
          failed: trx.raw('failed + ?', [out.failures.length]),
          updated_at: trx.fn.now(),
        });
      if (included > 0 && out.created > 0) await recordPeak(trx, imp.team_id, await billableCount(trx, imp.team_id));
    },
    { connection: conn },
  );
}

/** A failure as kept: text PostgreSQL can store (no U+0000), the address cell cut at 320 characters. */
function failureRow(importId: string, f: BatchFailure) {
  const clean = (v: string) => v.replaceAll('\u0000', '');
  return {
    import_id: importId,
    row: f.row,
    email: f.email === null ? null : clean(f.email).slice(0, 320),
    reason: clean(f.reason),
  };
}

/** Ends the import (completed, or failed with `error`) and records its one audit entry, in one transaction. */
async function finish(db: Knex, imp: ImportRow, offset: number, error: string | null): Promise<void> {
  await db.transaction(async (trx) => {
    await own(trx, imp, offset);
    const status = error === null ? 'completed' : 'failed';
    const [row] = await trx<ImportRow>('contact_imports')
      .where({ id: imp.id })
      .update({
        status,
        error: error?.slice(0, ERROR_MAX_LENGTH) ?? null,
        total: error === null ? offset : trx.raw('greatest(total, ?)', [offset]),
        completed_at: trx.fn.now() as never,
        updated_at: trx.fn.now() as never,
      })
      .returning('*');
    await recordAudit(trx, imp.team_id, {
      actor:
        imp.user_id && !imp.api_key_id ? { type: 'user', id: imp.user_id } : { type: 'api_key', id: imp.api_key_id },
      action: 'contacts.imported',
      subject: { type: 'contact_import', id: imp.id },
      data: {
        status,
        error: row.error,
        counts: {
          total: row.total,
          created: row.created,
          updated: row.updated,
          skipped: row.skipped,
          failed: row.failed,
        },
        file_bytes: Number(imp.file_bytes),
        on_conflict: imp.on_conflict,
        segment_ids: imp.segment_ids,
        topic_ids: imp.topics.map((t) => t.id),
      },
    });
  });
}

/** Marks an unfinished import failed (the job gave up on it); its committed rows and counts stay. */
export async function failImport(db: Knex, importId: string, error: string): Promise<void> {
  const imp = await db<ImportRow>('contact_imports')
    .where({ id: importId })
    .whereIn('status', ['queued', 'in_progress'])
    .first();
  if (!imp) return;
  await finish(db, { ...imp, status: 'in_progress' }, imp.row_offset, error).catch((err) => {
    if (!(err instanceof Superseded)) throw err;
  });
}

/** Runs (or resumes) the import. */
export async function runImport(deps: ImportRunDeps, importId: string): Promise<RunOutcome> {
  const { db, blobs, log } = deps;
  const imp = await claim(db, importId);
  if (!imp) return 'finished already';
  const file = imp.blob_key ? await blobs.getStream(imp.blob_key) : null;
  if (!file) {
    await finish(db, imp, imp.row_offset, 'the uploaded file is no longer stored');
    return 'failed';
  }
  log.info({ importId, teamId: imp.team_id, resumeAt: imp.row_offset }, 'contact_import.started');
  // One connection for the run: each batch's transaction runs on it, and its COPY with it.
  const conn: pg.ClientBase = await db.client.acquireConnection();
  try {
    return await readAndWrite(deps, imp, file, conn);
  } finally {
    await db.client.releaseConnection(conn);
  }
}

async function readAndWrite(deps: ImportRunDeps, imp: ImportRow, file: Readable, conn: pg.ClientBase) {
  const { db, log } = deps;
  const importId = imp.id;
  let offset = imp.row_offset;
  const parser = csvParser();
  const reading = pipeline(file, parser);
  reading.catch(() => {}); // its failure is the loop's (a parse error) or ours (the parser destroyed on the way out)
  const writes = new WriteQueue(READ_AHEAD_BATCHES);
  const mode: WriteMode = { copy: true };
  const flush = (rows: BatchRow[]) => {
    const at = offset;
    offset += rows.length;
    return writes.push(() => writeAndAdvance(db, conn, imp, rows, at, mode));
  };
  let record = 0; // records read, the header included
  let batch: BatchRow[] = [];
  try {
    for await (const fields of parser as AsyncIterable<string[]>) {
      if (deps.signal?.aborted) break;
      record++;
      if (record === 1 || record - 1 <= imp.row_offset) continue; // the header; rows a run before committed
      batch.push({ row: record, result: readRow(fields, imp.column_map, imp.columns) });
      if (batch.length >= deps.batchRows) {
        await flush(batch);
        batch = [];
      }
    }
    if (deps.signal?.aborted) {
      // What was read and not yet queued is read again by the run that resumes at the committed offset.
      parser.destroy();
      await writes.drain();
      log.info({ importId, rows: offset }, 'contact_import.paused');
      return 'paused';
    }
    await reading;
    if (batch.length) await flush(batch);
    await writes.drain();
  } catch (err) {
    parser.destroy();
    await writes.drain().catch(() => {});
    if (err instanceof Superseded) return 'superseded';
    if (!(err instanceof CsvError)) throw err;
    // The api checked the file's structure when it took it; a file that still cannot be read ends the import.
    await writes.drain(); // a write that failed is retried by the job, from the offset committed
    await finish(db, imp, offset, `the file could not be read after row ${record}: ${err.message}`);
    return 'failed';
  }
  await finish(db, imp, offset, null);
  log.info({ importId, teamId: imp.team_id, rows: offset }, 'contact_import.completed');
  // The peak after the import (a count of the team's billable contacts), once the import shows completed.
  await recordPeak(db, imp.team_id, await billableCount(db, imp.team_id));
  return 'completed';
}
