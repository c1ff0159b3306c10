// Contact import rows (migrations/20261127010100_contact_imports.ts): created by the api once the file is stored
// and the form checked, moved by the worker (shared/imports/run.ts), read by the api. Every read is scoped by team.
import type { Knex } from 'knex';
import { isUuid } from '../ids.ts';
import { paginate, type ListQuery } from '../pagination.ts';
import type { ColumnMap, ImportRequest, ImportTopic } from './column-map.ts';

export const importStatuses = ['queued', 'in_progress', 'completed', 'failed'] as const;
export type ImportStatus = (typeof importStatuses)[number];

export interface ImportRow {
  id: string;
  team_id: string;
  status: ImportStatus;
  api_key_id: string | null;
  user_id: string | null;
  blob_key: string | null;
  file_bytes: string;
  columns: string[];
  column_map: ColumnMap;
  on_conflict: 'upsert' | 'skip';
  segment_ids: string[];
  topics: ImportTopic[];
  row_offset: number;
  total: number;
  created: number;
  updated: number;
  skipped: number;
  failed: number;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  updated_at: Date;
  completed_at: Date | null;
  file_deleted_at: Date | null;
}

export interface ImportFailureRow {
  row: number;
  email: string | null;
  reason: string;
}

/** Where an import's file is kept. */
export const importBlobKey = (teamId: string, importId: string) => `imports/${teamId}/${importId}.csv`;

export interface NewImport extends ImportRequest {
  id: string;
  teamId: string;
  apiKeyId: string | null;
  userId: string | null;
  blobKey: string;
  fileBytes: number;
  columns: string[];
  total: number;
}

export async function insertImport(db: Knex, input: NewImport): Promise<ImportRow> {
  const [row] = await db<ImportRow>('contact_imports')
    .insert({
      id: input.id,
      team_id: input.teamId,
      api_key_id: input.apiKeyId,
      user_id: input.userId,
      blob_key: input.blobKey,
      file_bytes: String(input.fileBytes),
      columns: JSON.stringify(input.columns) as never,
      column_map: JSON.stringify(input.columnMap) as never,
      on_conflict: input.onConflict,
      segment_ids: input.segmentIds,
      topics: JSON.stringify(input.topics) as never,
      total: input.total,
    })
    .returning('*');
  return row;
}

/** The team's import, or null (an unknown id, another team's, not a UUID). */
export async function getImport(db: Knex, teamId: string, id: string): Promise<ImportRow | null> {
  if (!isUuid(id)) return null;
  return (await db<ImportRow>('contact_imports').where({ team_id: teamId, id }).first()) ?? null;
}

/** A page of the team's imports, newest first; only those in `status` when it is given. */
export function listImports(db: Knex, teamId: string, page: ListQuery & { status?: ImportStatus }) {
  const query = db('contact_imports').where({ team_id: teamId });
  if (page.status) query.where({ status: page.status });
  return paginate<ImportRow>(query, page);
}

/** The failures kept for the import (the first 1,000), in file order. */
export function importFailures(db: Knex, importId: string): Promise<ImportFailureRow[]> {
  return db('contact_import_failures').where({ import_id: importId }).orderBy('row').select('row', 'email', 'reason');
}
