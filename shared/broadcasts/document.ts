// A broadcast written as a block document (the templates' model, shared/templates/blocks.ts): the route's schema
// checks it as the templates' does; here each block field's merge tags are read (a `{{` that is no merge tag is a
// 422 naming the field and `details.block_id`, as the templates' checks name it), then the document is rendered
// once through the templates' renderer (MJML) into the html and text the fan-out merges per recipient. The merge
// tags stay in that html and text as written: they are filled per recipient, as in html (merge.ts).
import { allBlocks, type BlockDocument } from '../templates/blocks.ts';
import { renderDocument } from '../templates/blocks-render.ts';
import { blockFields } from '../templates/compile.ts';
import { TemplateError } from '../templates/positions.ts';
import { ServiceError } from '../errors.ts';
import { compileMerge, mergeTags, renderMerge, unresolvedNames, type MergeContext } from './merge.ts';
import type { EmailCheck, Image, Link } from '../checks/types.ts';

function position(value: string, offset: number): { line: number; column: number } {
  const before = value.slice(0, offset);
  return { line: before.split('\n').length, column: offset - (before.lastIndexOf('\n') + 1) + 1 };
}

/** A `{{` or `}}` outside every merge tag of `value`: a tag mistyped, which would reach the inbox as written. */
function strayBraces(value: string): number | null {
  let rest = value;
  for (const tag of mergeTags(value).reverse())
    rest = rest.slice(0, tag.start) + ' '.repeat(tag.end - tag.start) + rest.slice(tag.end);
  const at = rest.search(/\{\{|\}\}/);
  return at < 0 ? null : at;
}

const PROBLEM =
  'a merge tag is written `{{{NAME}}}` or `{{{NAME|fallback}}}` (a contact field, a contact property or RESEND_UNSUBSCRIBE_URL)';

/** Every templated field of the document has well-formed merge tags; the first that has not is a 422. */
export function checkDocumentTags(doc: BlockDocument): void {
  if (doc.preheader) {
    const at = strayBraces(doc.preheader);
    if (at !== null) throw new TemplateError('document.preheader', position(doc.preheader, at), PROBLEM);
  }
  for (const { block, path } of allBlocks(doc))
    for (const [name, value] of blockFields(block)) {
      const at = value ? strayBraces(value) : null;
      if (at !== null) throw new TemplateError(`document.${path}.${name}`, position(value, at), PROBLEM, block.id);
    }
}

export interface BodyInput {
  html?: string | null;
  text?: string | null;
  document?: BlockDocument | null;
}

/**
 * The body fields a create or an update sets: a document with the html and text rendered from it (the text as given
 * when given), html (which leaves a document), or, for `document: null` alone, the document dropped and the html it
 * made kept. Undefined fields are left as they are.
 */
export async function readBody(input: BodyInput, publicBaseUrl: string): Promise<BodyInput> {
  if (input.document && input.html !== undefined && input.html !== null)
    throw new ServiceError('validation_error', 'Invalid `document`: give `html` or `document`, not both.', {
      errors: [{ path: 'document', message: 'give `html` or `document`, not both' }],
    });
  if (input.document) {
    checkDocumentTags(input.document);
    const rendered = await renderDocument(input.document, publicBaseUrl);
    return { document: input.document, html: rendered.html, text: input.text ?? rendered.text };
  }
  if (input.html !== undefined) return { document: null, html: input.html, text: input.text };
  return { document: input.document === null ? null : undefined, text: input.text };
}

const PLACEHOLDER = '{{{RESEND_UNSUBSCRIBE_URL}}}';

/**
 * The document's links and images as a recipient without values sees them, each with its block: what the send
 * gate's checks read instead of the html's (so a finding names its block, as a template's checks do).
 */
export function documentFacts(doc: BlockDocument, ctx: MergeContext): { links: Link[]; images: Image[] } {
  const blank = { email: '', first_name: null, last_name: null, properties: {} };
  const fill = (s: string) => renderMerge(compileMerge(s), blank, PLACEHOLDER, ctx, false);
  const links: Link[] = [];
  const images: Image[] = [];
  for (const { block: b } of allBlocks(doc)) {
    if (b.type === 'image') {
      const alt = b.alt === undefined ? null : fill(b.alt);
      images.push({ src: fill(b.src), alt, linked: b.href !== undefined, block_id: b.id });
      if (b.href) links.push({ href: fill(b.href), text: alt ?? '', block_id: b.id });
    } else if (b.type === 'button') links.push({ href: fill(b.href), text: fill(b.text), block_id: b.id });
    else if (b.type === 'social')
      for (const l of b.links) {
        links.push({ href: fill(l.href), text: l.network, block_id: b.id });
        if (l.icon_src) images.push({ src: fill(l.icon_src), alt: l.network, linked: true, block_id: b.id });
      }
    else if (b.type === 'footer')
      links.push({ href: PLACEHOLDER, text: b.unsubscribe_text ?? 'Unsubscribe', block_id: b.id });
  }
  return { links, images };
}

/**
 * The checks' findings with the block named where the check itself cannot: an `unresolved_variable` finding names
 * a merge tag, which is found in the first block field that uses it.
 */
export function pointAtBlocks(checks: EmailCheck[], doc: BlockDocument, ctx: MergeContext): EmailCheck[] {
  const blockOf = new Map<string, string>();
  for (const { block } of allBlocks(doc))
    for (const [, value] of blockFields(block))
      for (const name of value ? unresolvedNames([value], ctx) : [])
        if (!blockOf.has(name)) blockOf.set(name, block.id);
  return checks.map((c) => {
    const name = c.code === 'unresolved_variable' && !c.block_id ? /^`([^`]+)`/.exec(c.message)?.[1] : undefined;
    const blockId = name && blockOf.get(name);
    return blockId ? { ...c, block_id: blockId } : c;
  });
}
