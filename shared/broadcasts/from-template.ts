// A broadcast made from a template (`template_id` at create): the published version's subject, html, text and
// document copied into the broadcast once, with the template's own declared variables filled (the values given,
// else their fallbacks). It is a snapshot: the broadcast holds its own content from then on, so a later edit,
// publish or delete of the template changes nothing already made. What is left as written is what a broadcast
// fills per recipient: the unsubscribe link (a template may print nothing else it does not declare).
import type { Knex } from 'knex';
import { ServiceError } from '../errors.ts';
import { allBlocks, type BlockDocument } from '../templates/blocks.ts';
import {
  blockFields,
  compileContent,
  renderContent,
  renderField,
  type CompiledTemplate,
} from '../templates/compile.ts';
import { TemplateCache } from '../templates/send.ts';
import { getVersion, publishedRef } from '../templates/store.ts';
import { bindSample, checkValuesSize } from '../templates/variables.ts';
import type { ContentInput } from './content.ts';

const refusal = (path: string, message: string) =>
  new ServiceError('validation_error', `Invalid \`${path}\`: ${message}.`, { errors: [{ path, message }] });

/** Sets `value` at a dotted path (`text`, `links.0.href`) of a block. */
function setAt(target: Record<string, unknown>, path: string, value: string): void {
  const keys = path.split('.');
  let at: Record<string, unknown> = target;
  for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>;
  at[keys[keys.length - 1]] = value;
}

/** The version's document with every templated field filled (plain text: the document renderer escapes it). */
function fillDocument(t: CompiledTemplate, doc: BlockDocument, context: Record<string, unknown>): BlockDocument {
  const copy = structuredClone(doc);
  if (copy.preheader) copy.preheader = renderField(t, 'preheader', copy.preheader, context);
  for (const { block, path } of allBlocks(copy))
    for (const [name, value] of blockFields(block))
      if (value)
        setAt(block as unknown as Record<string, unknown>, name, renderField(t, `${path}.${name}`, value, context));
  return copy;
}

export interface TemplateSnapshot extends ContentInput {
  template_id: string;
}

/**
 * The content a broadcast takes from the team's template `idOrAlias`: its published version filled with `values`.
 * A template of another team, deleted, or never published is a 422 naming `template_id`; a value missing or of
 * the wrong type one naming `variables.<key>`.
 */
export async function templateSnapshot(
  db: Knex,
  cache: TemplateCache | undefined,
  teamId: string,
  idOrAlias: string,
  values: Record<string, unknown> | undefined,
): Promise<TemplateSnapshot> {
  const ref = await publishedRef(db, teamId, idOrAlias);
  if (!ref)
    throw refusal('template_id', `\`${idOrAlias}\` is not one of this team's templates (deleted, or never made)`);
  if (!ref.published_version_id)
    throw refusal('template_id', `template \`${idOrAlias}\` has no published version: publish it first`);
  let compiled = cache?.get(ref.published_version_id);
  if (!compiled) {
    const version = await getVersion(db, teamId, ref.published_version_id);
    if (!version) throw refusal('template_id', `\`${idOrAlias}\` is not one of this team's templates`);
    compiled = compileContent(version);
    cache?.set(version.id, compiled);
  }
  try {
    checkValuesSize(values);
  } catch {
    throw refusal('variables', 'the values are too large');
  }
  const { context, missing } = bindSample(compiled.content.variables, values, compiled.required);
  if (missing.length)
    throw new ServiceError('validation_error', `Invalid \`variables.${missing[0]}\`: is required.`, {
      errors: missing.map((key) => ({
        path: `variables.${key}`,
        message: 'is required: the template prints it and declares no fallback',
      })),
    });
  const rendered = renderContent(compiled, context);
  const doc = compiled.content.document;
  return {
    template_id: ref.id,
    from: compiled.content.from ?? undefined,
    reply_to: compiled.content.reply_to ?? undefined,
    subject: rendered.subject ?? undefined,
    // A document is copied filled, and rendered again as any broadcast document is (content.ts).
    ...(doc ? { document: fillDocument(compiled, doc, context) } : { html: rendered.html, text: rendered.text }),
  };
}
