// Templates: create, update, duplicate, publish. A template's draft is always valid: every write checks the whole
// draft as it would be (syntax, variables, the block document rendered through MJML) and writes nothing when it is
// not. A change of the content (from, subject, reply_to, html, text, document, variables) gives the draft a new
// version id; publishing freezes that version (template_versions), which is what sends render from then on. The
// name and the alias are the template's own, not its content's: they change at once, unversioned.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { ServiceError, notFound } from '../errors.ts';
import type { BlockDocument } from './blocks.ts';
import { renderDocument } from './blocks-render.ts';
import { checkContent } from './compile.ts';
import {
  checkAlias,
  checkFrom,
  checkReplyTo,
  checkSubject,
  checkVariables,
  fieldError,
  type VariableInput,
} from './fields.ts';
import {
  CONTENT_COLUMNS,
  contentValues,
  insertTemplate,
  named,
  nextVersionNumber,
  type TemplateContentRow,
  type TemplateRow,
} from './store.ts';

export interface TemplateInput {
  name?: string;
  alias?: string | null;
  from?: string | null;
  subject?: string | null;
  reply_to?: string | string[] | null;
  html?: string;
  text?: string | null;
  document?: BlockDocument | null;
  variables?: VariableInput[];
}

/** The body of the draft: html and text as given, or made from the document (MJML, once, here). */
async function body(previous: TemplateRow | null, input: TemplateInput, publicBaseUrl: string) {
  if (input.html !== undefined && input.document) throw fieldError('document', 'give `html` or `document`, not both');
  if (input.document) {
    if (input.text !== undefined && input.text !== null)
      throw fieldError('text', 'a template made of a `document` has the text part written from its blocks');
    return { document: input.document, ...(await renderDocument(input.document, publicBaseUrl)) };
  }
  if (input.html !== undefined) {
    // Leaving a document for html: the text written from its blocks goes with it.
    const text = input.text !== undefined ? input.text : previous && !previous.document ? previous.text : null;
    return { document: null, html: input.html, text };
  }
  if (!previous)
    throw new ServiceError('missing_required_field', 'Missing `html` field.', {
      errors: [{ path: 'html', message: 'Required unless `document` is given' }],
    });
  if (input.text !== undefined && input.text !== null && previous.document && input.document !== null)
    throw fieldError('text', 'a template made of a `document` has the text part written from its blocks');
  return {
    document: input.document === null ? null : previous.document,
    html: previous.html,
    text: input.text !== undefined ? input.text : previous.text,
  };
}

/** The draft's content after `input`, checked whole; throws a 422 naming the first problem. */
export async function draft(
  previous: TemplateRow | null,
  input: TemplateInput,
  now: Date,
  publicBaseUrl: string,
): Promise<TemplateContentRow> {
  checkAlias(input.alias);
  checkSubject(input.subject);
  const from = checkFrom(input.from);
  const replyTo = checkReplyTo(input.reply_to);
  const variables = input.variables
    ? checkVariables(input.variables, previous?.variables ?? [], now.toISOString())
    : (previous?.variables ?? []);
  const content: TemplateContentRow = {
    from: from !== undefined ? from : (previous?.from ?? null),
    subject: input.subject !== undefined ? input.subject : (previous?.subject ?? null),
    reply_to: replyTo !== undefined ? replyTo : (previous?.reply_to ?? null),
    variables,
    ...(await body(previous, input, publicBaseUrl)),
  };
  checkContent(content);
  return content;
}

/** An alias already used in the team is a 422 naming `alias`, not the database's error. */
function aliasTaken(err: unknown): never {
  if (
    (err as { code?: string; constraint?: string }).code === '23505' &&
    /alias/.test((err as { constraint?: string }).constraint ?? '')
  )
    throw fieldError('alias', 'is the alias of another template of the team');
  throw err;
}

export async function createTemplate(
  db: Knex,
  teamId: string,
  input: TemplateInput & { name: string },
  publicBaseUrl: string,
): Promise<TemplateRow> {
  const now = new Date();
  const content = await draft(null, input, now, publicBaseUrl);
  return insertTemplate(db, {
    id: newId(),
    team_id: teamId,
    name: input.name,
    alias: input.alias ?? null,
    ...content,
    current_version_id: newId(),
    published_version_id: null,
    published_at: null,
    created_at: now,
    updated_at: now,
  }).catch(aliasTaken);
}

const sameContent = (a: TemplateContentRow, b: TemplateContentRow) =>
  CONTENT_COLUMNS.every((c) => JSON.stringify(a[c]) === JSON.stringify(b[c]));

/** Applies `input` to the team's template (null when it has none), under its row lock. */
export async function updateTemplate(
  db: Knex,
  teamId: string,
  idOrAlias: string,
  input: TemplateInput,
  publicBaseUrl: string,
): Promise<TemplateRow | null> {
  return db
    .transaction(async (trx) => {
      const previous = await named(trx, teamId, idOrAlias).forUpdate().first();
      if (!previous) return null;
      const now = new Date();
      const content = await draft(previous, input, now, publicBaseUrl);
      const changed = !sameContent(previous, content);
      const [row] = await trx<TemplateRow>('templates')
        .where({ id: previous.id })
        .update({
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.alias !== undefined ? { alias: input.alias } : {}),
          ...contentValues(content),
          ...(changed ? { current_version_id: newId() } : {}),
          updated_at: now,
        } as never)
        .returning('*');
      return row as TemplateRow;
    })
    .catch(aliasTaken);
}

/** A new template with the draft of the team's template `idOrAlias`: unpublished, no alias, named "… (copy)". */
export async function duplicateTemplate(db: Knex, teamId: string, idOrAlias: string): Promise<TemplateRow> {
  const source = await named(db, teamId, idOrAlias).first();
  if (!source) throw notFound('Template');
  const now = new Date();
  return insertTemplate(db, {
    ...source,
    id: newId(),
    name: `${source.name.slice(0, 193)} (copy)`,
    alias: null,
    current_version_id: newId(),
    published_version_id: null,
    published_at: null,
    created_at: now,
    updated_at: now,
  });
}

/**
 * Publishes the draft: its version becomes immutable and what sends use. Publishing a draft that is already the
 * published version changes nothing.
 */
export async function publishTemplate(db: Knex, teamId: string, idOrAlias: string): Promise<TemplateRow> {
  return db.transaction(async (trx) => {
    const row = await named(trx, teamId, idOrAlias).forUpdate().first();
    if (!row) throw notFound('Template');
    if (row.published_version_id === row.current_version_id) return row;
    await trx('template_versions').insert({
      id: row.current_version_id,
      team_id: teamId,
      template_id: row.id,
      number: await nextVersionNumber(trx, row.id),
      ...contentValues(row),
    });
    const [published] = await trx<TemplateRow>('templates')
      .where({ id: row.id })
      .update({
        published_version_id: row.current_version_id,
        published_at: trx.fn.now(),
        updated_at: trx.fn.now(),
      } as never)
      .returning('*');
    return published as TemplateRow;
  });
}
