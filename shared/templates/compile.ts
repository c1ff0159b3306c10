// A template's content (a draft, or a published version) checked, compiled and rendered as one: its subject, html
// and text with its declared variables. A block document's fields are checked one by one first, so a mistake is
// named by the block's field and id rather than by a position in the HTML MJML made of it.
import { allBlocks, type BlockDocument, type LeafBlock } from './blocks.ts';
import {
  checkCompiles,
  compilePart,
  RenderBudget,
  RenderLimitError,
  renderPart,
  type CompiledPart,
  type PartMode,
} from './engine.ts';
import { TemplateError } from './positions.ts';
import { parsePart, type ParsedPart } from './syntax.ts';
import type { TemplateVariable, VariableType } from './variables.ts';
import type { Image, Link } from '../checks/types.ts';
import { ServiceError } from '../errors.ts';

export interface TemplateContent {
  /** The sender and reply-to a send takes when it gives none (checked when written, not rendered). */
  from?: string | null;
  reply_to?: string[] | null;
  subject: string | null;
  html: string;
  text: string | null;
  document: BlockDocument | null;
  variables: TemplateVariable[];
}

export interface CompiledTemplate {
  content: TemplateContent;
  declared: ReadonlyMap<string, VariableType>;
  /** Variables printed with no inline fallback: a send must give them unless they declare a fallback. */
  required: ReadonlySet<string>;
  subject: CompiledPart | null;
  html: CompiledPart;
  text: CompiledPart | null;
  /** The block fields compiled for the checks, on first use. */
  fields?: Map<string, CompiledPart>;
}

export interface Rendered {
  subject: string | null;
  html: string;
  text: string | null;
}

const declaredOf = (variables: TemplateVariable[]) => new Map(variables.map((v) => [v.key, v.type] as const));

/** The fields of a block that hold template text, by name. */
export function blockFields(b: LeafBlock | { type: 'columns' }): [string, string][] {
  switch (b.type) {
    case 'heading':
    case 'text':
      return [['text', b.text]];
    case 'image':
      return [
        ['src', b.src],
        ['alt', b.alt ?? ''],
        ['href', b.href ?? ''],
      ];
    case 'button':
      return [
        ['text', b.text],
        ['href', b.href],
      ];
    case 'social':
      return b.links.flatMap((l, i): [string, string][] => [
        [`links.${i}.href`, l.href],
        [`links.${i}.icon_src`, l.icon_src ?? ''],
      ]);
    case 'footer':
      return [
        ['text', b.text ?? ''],
        ['unsubscribe_text', b.unsubscribe_text ?? ''],
      ];
    default:
      return [];
  }
}

/** Each templated field of the document read on its own; a problem names `document.<path>.<field>` and the block. */
function checkDocument(doc: BlockDocument, declared: ReadonlyMap<string, VariableType>): void {
  if (doc.preheader) parsePart('document.preheader', doc.preheader, declared);
  for (const { block, path } of allBlocks(doc)) {
    for (const [name, value] of blockFields(block)) {
      if (!value) continue;
      try {
        parsePart(`document.${path}.${name}`, value, declared);
      } catch (err) {
        if (err instanceof TemplateError) throw err.renamed(err.field, block.id);
        throw err;
      }
    }
  }
}

function parseAll(content: TemplateContent) {
  const declared = declaredOf(content.variables);
  if (content.document) checkDocument(content.document, declared);
  const subject = content.subject === null ? null : parsePart('subject', content.subject, declared);
  const html = parsePart('html', content.html, declared);
  const text = content.text === null ? null : parsePart('text', content.text, declared);
  const required = new Set<string>();
  for (const p of [subject, html, text]) for (const name of p?.required ?? []) required.add(name);
  return { declared, subject, html, text, required };
}

/** A draft as it is written: every part parsed, checked against the variables, and through Handlebars' compiler. */
export function checkContent(content: TemplateContent): void {
  const parts = parseAll(content);
  for (const p of [parts.subject, parts.html, parts.text]) if (p) checkCompiles(p);
}

export function compileContent(content: TemplateContent): CompiledTemplate {
  const parts = parseAll(content);
  const compile = (p: ParsedPart | null, mode: PartMode) => (p ? compilePart(p, mode) : null);
  return {
    content,
    declared: parts.declared,
    required: parts.required,
    subject: compile(parts.subject, 'subject'),
    html: compilePart(parts.html, 'html'),
    text: compile(parts.text, 'text'),
  };
}

/** A render past the engine's bounds, as the send's refusal. */
function limitRefusal(err: RenderLimitError): ServiceError {
  const message = `rendering the template stopped: ${err.message}`;
  return new ServiceError('validation_error', `Invalid \`template.variables\`: ${message}.`, {
    errors: [{ path: 'template.variables', message }],
  });
}

/** Subject, html and text filled with `context` (the values, fallbacks applied); one budget for the three. */
export function renderContent(t: CompiledTemplate, context: Record<string, unknown>): Rendered {
  const budget = new RenderBudget();
  try {
    return {
      subject: t.subject && renderPart(t.subject, context, budget),
      html: renderPart(t.html, context, budget),
      text: t.text && renderPart(t.text, context, budget),
    };
  } catch (err) {
    if (err instanceof RenderLimitError) throw limitRefusal(err);
    throw err;
  }
}

/** One block field rendered as plain text (a URL, an alt): for the checks, and a broadcast's copy of a document. */
export function renderField(
  t: CompiledTemplate,
  path: string,
  value: string,
  context: Record<string, unknown>,
): string {
  t.fields ??= new Map();
  let part = t.fields.get(path);
  if (!part) {
    part = compilePart(parsePart(path, value, t.declared), 'text');
    t.fields.set(path, part);
  }
  return renderPart(part, context, new RenderBudget());
}

/** The document's links and images, filled with `context`, each with its block: what the checks read. */
export function documentFacts(
  t: CompiledTemplate,
  context: Record<string, unknown>,
): { links: Link[]; images: Image[] } {
  const links: Link[] = [];
  const images: Image[] = [];
  const doc = t.content.document;
  if (!doc) return { links, images };
  for (const { block: b, path } of allBlocks(doc)) {
    const field = (name: string, value: string) => renderField(t, `${path}.${name}`, value, context);
    if (b.type === 'image') {
      const alt = b.alt === undefined ? null : field('alt', b.alt);
      images.push({ src: field('src', b.src), alt, linked: b.href !== undefined, block_id: b.id });
      if (b.href) links.push({ href: field('href', b.href), text: alt ?? '', block_id: b.id });
    } else if (b.type === 'button')
      links.push({ href: field('href', b.href), text: field('text', b.text), block_id: b.id });
    else if (b.type === 'social')
      b.links.forEach((l, i) => {
        links.push({ href: field(`links.${i}.href`, l.href), text: l.network, block_id: b.id });
        if (l.icon_src)
          images.push({ src: field(`links.${i}.icon_src`, l.icon_src), alt: l.network, linked: true, block_id: b.id });
      });
    else if (b.type === 'footer')
      links.push({ href: '{{{RESEND_UNSUBSCRIBE_URL}}}', text: b.unsubscribe_text ?? 'Unsubscribe', block_id: b.id });
  }
  return { links, images };
}
