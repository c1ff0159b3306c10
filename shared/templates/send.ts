// A send that names a template (`template: {id, variables}`, id or alias): the template's published version,
// compiled once per process and version (TemplateCache; a version never changes, so nothing is ever stale), filled
// with the send's values, gives the send its html, text, and, when the send does not give them, its from, subject
// and reply_to. What is stored and delivered is that rendered message. An unknown template, one never published,
// a value of the wrong type or a missing one is a 422 naming it.
import type { Knex } from 'knex';
import { ServiceError } from '../errors.ts';
import { compileContent, documentFacts, renderContent, type CompiledTemplate, type Rendered } from './compile.ts';
import { getVersion, publishedRef } from './store.ts';
import { bindValues, checkValuesSize } from './variables.ts';
import type { Image, Link } from '../checks/types.ts';

/** What a compiled version holds, in characters: its sources, which its compiled functions keep as strings. */
const sizeOf = (c: CompiledTemplate) =>
  c.content.html.length +
  (c.content.text?.length ?? 0) +
  (c.content.subject?.length ?? 0) +
  (c.content.document ? JSON.stringify(c.content.document).length : 0);

/**
 * Compiled versions by version id, one cache per process (api/app.ts): the least recently used dropped past `max`
 * versions or `maxChars` of their sources (a version holds up to 1 MB of html and text).
 */
export class TemplateCache {
  private readonly entries = new Map<string, { compiled: CompiledTemplate; size: number }>();
  private chars = 0;
  constructor(
    private readonly max = 500,
    private readonly maxChars = 32 * 1024 * 1024,
  ) {}

  get(versionId: string): CompiledTemplate | undefined {
    const hit = this.entries.get(versionId);
    if (hit) {
      this.entries.delete(versionId);
      this.entries.set(versionId, hit);
    }
    return hit?.compiled;
  }

  set(versionId: string, compiled: CompiledTemplate): void {
    const size = sizeOf(compiled);
    this.delete(versionId);
    this.entries.set(versionId, { compiled, size });
    this.chars += size;
    while (this.entries.size > 1 && (this.entries.size > this.max || this.chars > this.maxChars))
      this.delete(this.entries.keys().next().value!);
  }

  private delete(versionId: string): void {
    const entry = this.entries.get(versionId);
    if (!entry) return;
    this.entries.delete(versionId);
    this.chars -= entry.size;
  }

  get size(): number {
    return this.entries.size;
  }
}

const refusal = (path: string, message: string) =>
  new ServiceError('validation_error', `Invalid \`${path}\`: ${message}.`, { errors: [{ path, message }] });

/** The published version of the team's template, compiled (from the cache when it can). */
export async function publishedTemplate(db: Knex, cache: TemplateCache, teamId: string, idOrAlias: string) {
  const ref = await publishedRef(db, teamId, idOrAlias);
  if (!ref) throw refusal('template.id', `template \`${idOrAlias}\` not found`);
  if (!ref.published_version_id)
    throw refusal(
      'template.id',
      `template \`${idOrAlias}\` has no published version: publish it first (POST /templates/{id}/publish)`,
    );
  let compiled = cache.get(ref.published_version_id);
  if (!compiled) {
    const version = await getVersion(db, teamId, ref.published_version_id);
    if (!version) throw refusal('template.id', `template \`${idOrAlias}\` not found`);
    compiled = compileContent(version);
    cache.set(version.id, compiled);
  }
  return { ref, compiled, from: compiled.content.from ?? null, replyTo: compiled.content.reply_to ?? null };
}

/** The fields of a send (shared/emails/prepare.ts SendInput) that a template fills or reads. */
export interface TemplateSendInput {
  from?: string;
  subject?: string;
  reply_to?: string | string[] | null;
  html?: string | null;
  text?: string | null;
  topic_id?: string | null;
  acknowledge_checks?: boolean | null;
  template?: { id: string; variables?: Record<string, unknown> } | null;
}

/** A template send rendered: the message, and what the pre-send checks read of a block document. */
export interface TemplateSend extends Rendered {
  template: { id: string; name: string; versionId: string };
  blocks?: { links: Link[]; images: Image[] };
}

/**
 * The send's input with the template applied: html and text rendered (a send may not give its own), from, subject
 * and reply_to taken from the version when the send leaves them out.
 */
export async function applyTemplate<I extends TemplateSendInput>(
  db: Knex,
  cache: TemplateCache,
  teamId: string,
  input: I,
  options: { blockFacts: boolean },
): Promise<{ input: I; sent: TemplateSend }> {
  const named = input.template!;
  for (const field of ['html', 'text'] as const)
    if (input[field] !== undefined && input[field] !== null)
      throw refusal(field, 'a send with a `template` takes its html and text from the template');
  checkValuesSize(named.variables);
  const { ref, compiled, from, replyTo } = await publishedTemplate(db, cache, teamId, named.id);
  const context = bindValues(compiled.content.variables, named.variables, compiled.required, `\`${named.id}\``);
  const rendered = renderContent(compiled, context);
  const sent: TemplateSend = {
    ...rendered,
    template: { id: ref.id, name: ref.name, versionId: ref.published_version_id! },
    ...(options.blockFacts && compiled.content.document ? { blocks: documentFacts(compiled, context) } : {}),
  };
  return {
    input: {
      ...input,
      from: input.from ?? from ?? undefined,
      subject: input.subject ?? rendered.subject ?? undefined,
      reply_to: input.reply_to ?? replyTo,
      html: rendered.html,
      // A template without a text part: the send makes one from the html, as for any send without text.
      text: rendered.text ?? undefined,
      template: null,
    },
    sent,
  };
}

/** The send as prepare.ts reads it: with its template applied when it names one (see applyTemplate). */
export async function withTemplate<I extends TemplateSendInput>(
  db: Knex,
  cache: TemplateCache | undefined,
  teamId: string,
  input: I,
): Promise<{ input: I; sent: TemplateSend | null }> {
  if (!input.template) return { input, sent: null };
  // The block facts only serve the checks of a campaign send.
  const blockFacts = !!input.topic_id && !input.acknowledge_checks;
  return applyTemplate(db, cache ?? new TemplateCache(1), teamId, input, { blockFacts });
}
