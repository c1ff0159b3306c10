// A team's export: an admin asks (pending), the worker builds it (running → completed or failed), the archive is
// kept 7 days (then expired, its blob deleted by the retention job). The archive is a zip with one JSON file per
// table of the team (shared/teams/tables.ts: every table with a team_id, found in the database), columns that hold
// secrets or their hashes left out, and manifest.json naming the files, their row counts and everything left out:
// those columns, the blob store's contents (message bytes, attachments, logos: not in the archive), and the rows past
// TEAM_EXPORT_MAX_BYTES or TEAM_EXPORT_MAX_SECONDS (then `truncated`). Rows are read in one repeatable-read
// transaction, so the files agree with each other.
import type { Knex } from 'knex';
import { ZipFile } from 'yazl';
import type { Config } from '../config.ts';
import type { BlobStore } from '../blobs.ts';
import type { Logger } from '../logger.ts';
import { newId } from '../ids.ts';
import { notFound } from '../errors.ts';
import { columnsOf, SECRET_COLUMN, teamTables } from './tables.ts';

export const EXPORT_KEEP_DAYS = 7;
const BATCH = 1000;

export interface ExportRow {
  id: string;
  team_id: string;
  requested_by: string | null;
  status: 'pending' | 'running' | 'completed' | 'failed' | 'expired';
  blob_key: string | null;
  bytes: string | number | null;
  truncated: boolean;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  expires_at: Date | null;
}

export async function requestExport(db: Knex, teamId: string, userId: string): Promise<ExportRow> {
  const [row] = await db<ExportRow>('team_exports')
    .insert({ id: newId(), team_id: teamId, requested_by: userId })
    .returning('*');
  return row;
}

export async function getExport(db: Knex, teamId: string, id: string): Promise<ExportRow> {
  const row = await db<ExportRow>('team_exports').where({ id, team_id: teamId }).first();
  if (!row) throw notFound('Team export');
  return row;
}

export function listExports(db: Knex, teamId: string): Promise<ExportRow[]> {
  return db<ExportRow>('team_exports').where({ team_id: teamId }).orderBy('id', 'desc').limit(100);
}

export interface ExportDeps {
  db: Knex;
  blobs: BlobStore;
  config: Pick<Config, 'TEAM_EXPORT_MAX_BYTES' | 'TEAM_EXPORT_MAX_SECONDS'>;
  log: Logger;
}

interface Manifest {
  format: 1;
  team_id: string;
  export_id: string;
  created_at: string;
  truncated: boolean;
  files: { name: string; table: string; rows: number }[];
  left_out: { what: string; reason: string }[];
}

function zipToBuffer(zip: ZipFile): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
    zip.end();
  });
}

/** Writes every table's rows of the team into `zip`, within the ceilings; answers the manifest. */
async function addTables(trx: Knex, deps: ExportDeps, row: ExportRow, zip: ZipFile): Promise<Manifest> {
  const started = Date.now();
  const manifest: Manifest = {
    format: 1,
    team_id: row.team_id,
    export_id: row.id,
    created_at: new Date().toISOString(),
    truncated: false,
    files: [],
    left_out: [{ what: 'blob store', reason: 'message bytes, attachments and logos are not in the archive' }],
  };
  let bytes = 0;
  const team = await trx('teams').where({ id: row.team_id }).first();
  zip.addBuffer(Buffer.from(JSON.stringify(team, null, 1)), 'team.json');
  manifest.files.push({ name: 'team.json', table: 'teams', rows: 1 });
  for (const table of await teamTables(trx)) {
    const columns = await columnsOf(trx, table);
    const kept = columns.filter((c) => !SECRET_COLUMN.test(c));
    for (const c of columns.filter((c) => SECRET_COLUMN.test(c)))
      manifest.left_out.push({ what: `${table}.${c}`, reason: 'a secret or its hash' });
    const rows: unknown[] = [];
    for (let offset = 0; ; offset += BATCH) {
      const over = bytes > deps.config.TEAM_EXPORT_MAX_BYTES ? 'size' : null;
      // Reached, not passed: a ceiling of 0 (a test's) truncates every table at its first batch.
      const late = Date.now() - started >= deps.config.TEAM_EXPORT_MAX_SECONDS * 1000 ? 'time' : null;
      if (over || late) {
        const [{ n }] = await trx(table).where({ team_id: row.team_id }).count({ n: '*' });
        const missing = Number(n) - rows.length;
        if (missing > 0) {
          manifest.truncated = true;
          manifest.left_out.push({
            what: `${table}: ${missing} rows`,
            reason: `the ${over ?? late} ceiling was reached`,
          });
        }
        break;
      }
      const batch = await trx(table)
        .where({ team_id: row.team_id })
        .orderByRaw('ctid')
        .limit(BATCH)
        .offset(offset)
        .select(kept);
      for (const r of batch) {
        rows.push(r);
        bytes += JSON.stringify(r).length;
      }
      if (batch.length < BATCH) break;
    }
    zip.addBuffer(Buffer.from(JSON.stringify(rows, null, 1)), `${table}.json`);
    manifest.files.push({ name: `${table}.json`, table, rows: rows.length });
  }
  return manifest;
}

/** Builds the archive of `exportId` once (the worker's export tick); a run that finds it taken does nothing. */
export async function buildExport(deps: ExportDeps, exportId: string, now = new Date()): Promise<ExportRow | null> {
  const [row] = await deps
    .db<ExportRow>('team_exports')
    .where({ id: exportId })
    .whereIn('status', ['pending'])
    .update({ status: 'running', started_at: now })
    .returning('*');
  if (!row) return null;
  try {
    const zip = new ZipFile();
    const manifest = await deps.db.transaction(async (trx) => addTables(trx, deps, row, zip), {
      isolationLevel: 'repeatable read',
    });
    zip.addBuffer(Buffer.from(JSON.stringify(manifest, null, 1)), 'manifest.json');
    const archive = await zipToBuffer(zip);
    const key = `exports/${row.team_id}/${row.id}.zip`;
    await deps.blobs.put(key, archive);
    const done = new Date();
    const [completed] = await deps
      .db<ExportRow>('team_exports')
      .where({ id: row.id, status: 'running' })
      .update({
        status: 'completed',
        blob_key: key,
        bytes: archive.length,
        truncated: manifest.truncated,
        completed_at: done,
        expires_at: new Date(done.getTime() + EXPORT_KEEP_DAYS * 86_400_000),
      })
      .returning('*');
    deps.log.info({ exportId: row.id, teamId: row.team_id, bytes: archive.length }, 'team_export.completed');
    return completed ?? null;
  } catch (err) {
    deps.log.error({ err, exportId: row.id }, 'team_export.failed');
    await deps
      .db('team_exports')
      .where({ id: row.id })
      .update({ status: 'failed', error: 'the archive could not be built', completed_at: new Date() });
    return null;
  }
}

/** The worker's export run (every 2 s): builds the pending exports, oldest first, a few per run. */
export async function buildPendingExports(deps: ExportDeps, limit = 5): Promise<number> {
  const ids = await deps.db('team_exports').where({ status: 'pending' }).orderBy('id').limit(limit).pluck('id');
  let built = 0;
  for (const id of ids) if (await buildExport(deps, id)) built++;
  return built;
}

/** Archives past their 7 days: expired, their blobs deleted. */
export async function expireExports(db: Knex, blobs: BlobStore, now = new Date()): Promise<number> {
  const due = await db<ExportRow>('team_exports').where({ status: 'completed' }).where('expires_at', '<=', now);
  for (const e of due) {
    await db('team_exports').where({ id: e.id, status: 'completed' }).update({ status: 'expired', blob_key: null });
    if (e.blob_key) await blobs.delete(e.blob_key);
  }
  return due.length;
}
