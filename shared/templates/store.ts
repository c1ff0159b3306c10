// Template rows and their published versions. Every function takes `db` first (knex or a transaction) and the team;
// another team's template is as absent as one that never existed. A template is named by its id or its alias: an
// alias never looks like an id (templates.ts refuses one that does), so the two cannot be confused.
import type { Knex } from 'knex';
import { isUuid } from '../ids.ts';
import { paginate, type ListQuery } from '../pagination.ts';
import type { BlockDocument } from './blocks.ts';
import type { TemplateVariable } from './variables.ts';

export interface TemplateRow {
  id: string;
  team_id: string;
  name: string;
  alias: string | null;
  from: string | null;
  subject: string | null;
  reply_to: string[] | null;
  html: string;
  text: string | null;
  document: BlockDocument | null;
  variables: TemplateVariable[];
  /** The draft's version: a new id for every change of the content. */
  current_version_id: string;
  /** What sends use; null until the first publish. */
  published_version_id: string | null;
  published_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface VersionRow {
  id: string;
  team_id: string;
  template_id: string;
  number: number;
  from: string | null;
  subject: string | null;
  reply_to: string[] | null;
  html: string;
  text: string | null;
  document: BlockDocument | null;
  variables: TemplateVariable[];
  created_at: Date;
}

/** The content columns, shared by a draft and its versions. */
export const CONTENT_COLUMNS = ['from', 'subject', 'reply_to', 'html', 'text', 'document', 'variables'] as const;
export type TemplateContentRow = Pick<TemplateRow, (typeof CONTENT_COLUMNS)[number]>;

/** jsonb parameters go as JSON text (pg would send an array as a PostgreSQL array). */
export function contentValues(c: TemplateContentRow): Record<string, unknown> {
  return {
    from: c.from,
    subject: c.subject,
    reply_to: c.reply_to,
    html: c.html,
    text: c.text,
    document: c.document === null ? null : JSON.stringify(c.document),
    variables: JSON.stringify(c.variables),
  };
}

/** The team's template named by `idOrAlias` (its id, or its alias), or null. */
export function named(db: Knex, teamId: string, idOrAlias: string) {
  return db<TemplateRow>('templates').where(
    isUuid(idOrAlias) ? { team_id: teamId, id: idOrAlias } : { team_id: teamId, alias: idOrAlias },
  );
}

export async function findTemplate(db: Knex, teamId: string, idOrAlias: string): Promise<TemplateRow | null> {
  return (await named(db, teamId, idOrAlias).first()) ?? null;
}

/** A page of the team's templates, newest first. */
export function listTemplates(db: Knex, teamId: string, page: ListQuery) {
  return paginate<TemplateRow>(
    db('templates')
      .where({ team_id: teamId })
      .select('id', 'name', 'alias', 'published_version_id', 'published_at', 'created_at', 'updated_at'),
    page,
  );
}

export async function insertTemplate(db: Knex, row: TemplateRow): Promise<TemplateRow> {
  const [written] = await db<TemplateRow>('templates')
    .insert({ ...row, ...contentValues(row) } as never)
    .returning('*');
  return written;
}

export async function deleteTemplate(db: Knex, teamId: string, idOrAlias: string): Promise<TemplateRow | null> {
  const [row] = await named(db, teamId, idOrAlias).delete().returning('*');
  return row ?? null;
}

/** What a send needs to find the version it renders: one small row, no content. */
export async function publishedRef(
  db: Knex,
  teamId: string,
  idOrAlias: string,
): Promise<{ id: string; name: string; published_version_id: string | null } | null> {
  return (await named(db, teamId, idOrAlias).first('id', 'name', 'published_version_id')) ?? null;
}

export async function getVersion(db: Knex, teamId: string, versionId: string): Promise<VersionRow | null> {
  return (await db<VersionRow>('template_versions').where({ team_id: teamId, id: versionId }).first()) ?? null;
}

/** The next version number of a template (1 for its first publish). */
export async function nextVersionNumber(db: Knex, templateId: string): Promise<number> {
  const [{ n }] = await db('template_versions').where({ template_id: templateId }).max({ n: 'number' });
  return (n ?? 0) + 1;
}
