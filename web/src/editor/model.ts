// The block document as the editor changes it (the api's TemplateBlockDocument, docs/templates.md): pure functions
// that return a new document, so an edit never mutates what React rendered. A block is addressed by its id, which is
// unique in the document (the api checks it) and what the pre-send checks name as `block_id`.
import type { Schemas } from '../api/client';

export type BlockDocument = Schemas['TemplateBlockDocument'];
export type Block = BlockDocument['blocks'][number];
export type ColumnsBlock = Schemas['TemplateBlockColumns'];
export type LeafBlock = ColumnsBlock['columns'][number]['blocks'][number];
export type BlockType = Block['type'];
export type AnyBlock = Block | LeafBlock;

export const BLOCK_KINDS: { type: BlockType; label: string }[] = [
  { type: 'heading', label: 'Heading' },
  { type: 'text', label: 'Text' },
  { type: 'image', label: 'Image' },
  { type: 'button', label: 'Button' },
  { type: 'divider', label: 'Divider' },
  { type: 'columns', label: 'Columns' },
  { type: 'social', label: 'Social links' },
  { type: 'footer', label: 'Footer' },
];

export const kindLabel = (type: BlockType) => BLOCK_KINDS.find((k) => k.type === type)?.label ?? type;

/** Every block, those inside columns included, in reading order. */
export function allBlocks(doc: BlockDocument): AnyBlock[] {
  return doc.blocks.flatMap((b) => (b.type === 'columns' ? [b, ...b.columns.flatMap((c) => c.blocks)] : [b]));
}

/** An id not used in the document: `<type>-<n>`. */
export function freshId(doc: BlockDocument, type: BlockType): string {
  const used = new Set(allBlocks(doc).map((b) => b.id));
  let n = 1;
  while (used.has(`${type}-${n}`)) n++;
  return `${type}-${n}`;
}

export function newBlock(doc: BlockDocument, type: BlockType): Block {
  const id = freshId(doc, type);
  switch (type) {
    case 'heading':
      return { id, type, text: 'A heading', level: 1 };
    case 'text':
      return { id, type, text: 'Some text.' };
    case 'image':
      return { id, type, src: 'https://example.com/image.png', alt: '' };
    case 'button':
      return { id, type, text: 'Open', href: 'https://example.com' };
    case 'divider':
      return { id, type };
    case 'columns':
      return { id, type, columns: [{ blocks: [] }, { blocks: [] }] };
    case 'social':
      return { id, type, links: [{ network: 'web', href: 'https://example.com' }] };
    case 'footer':
      return { id, type, text: 'Your company, its postal address' };
  }
}

/** Where a list of blocks is: the document's own, or a column of a columns block. */
export type ListRef = { parent: null } | { parent: string; column: number };

export const TOP: ListRef = { parent: null };

export function listOf(doc: BlockDocument, ref: ListRef): AnyBlock[] {
  if (ref.parent === null) return doc.blocks;
  const owner = doc.blocks.find((b) => b.id === ref.parent);
  return owner?.type === 'columns' ? (owner.columns[ref.column]?.blocks ?? []) : [];
}

function withList(doc: BlockDocument, ref: ListRef, blocks: AnyBlock[]): BlockDocument {
  if (ref.parent === null) return { ...doc, blocks: blocks as Block[] };
  return {
    ...doc,
    blocks: doc.blocks.map((b) =>
      b.id === ref.parent && b.type === 'columns'
        ? {
            ...b,
            columns: b.columns.map((c, i) => (i === ref.column ? { blocks: blocks as LeafBlock[] } : c)),
          }
        : b,
    ),
  };
}

/** The list holding block `id`, and its index there. */
export function locate(doc: BlockDocument, id: string): { ref: ListRef; index: number } | null {
  const top = doc.blocks.findIndex((b) => b.id === id);
  if (top >= 0) return { ref: TOP, index: top };
  for (const b of doc.blocks) {
    if (b.type !== 'columns') continue;
    for (let c = 0; c < b.columns.length; c++) {
      const index = b.columns[c].blocks.findIndex((x) => x.id === id);
      if (index >= 0) return { ref: { parent: b.id, column: c }, index };
    }
  }
  return null;
}

export function addBlock(doc: BlockDocument, ref: ListRef, block: AnyBlock): BlockDocument {
  return withList(doc, ref, [...listOf(doc, ref), block]);
}

export function replaceBlock(doc: BlockDocument, block: AnyBlock): BlockDocument {
  const at = locate(doc, block.id);
  if (!at) return doc;
  return withList(
    doc,
    at.ref,
    listOf(doc, at.ref).map((b, i) => (i === at.index ? block : b)),
  );
}

export function removeBlock(doc: BlockDocument, id: string): BlockDocument {
  const at = locate(doc, id);
  if (!at) return doc;
  return withList(
    doc,
    at.ref,
    listOf(doc, at.ref).filter((_, i) => i !== at.index),
  );
}

/** Block `id` moved `delta` places within its list; unchanged at either end. */
export function moveBlock(doc: BlockDocument, id: string, delta: -1 | 1): BlockDocument {
  const at = locate(doc, id);
  if (!at) return doc;
  const list = [...listOf(doc, at.ref)];
  const to = at.index + delta;
  if (to < 0 || to >= list.length) return doc;
  [list[at.index], list[to]] = [list[to], list[at.index]];
  return withList(doc, at.ref, list);
}

/** A line saying what the block holds, for its row in the list: its start only (a pasted megabyte would be laid out
 * on every render). */
export function summary(b: AnyBlock): string {
  const line = fullSummary(b);
  return line.length > SUMMARY_CHARS ? `${line.slice(0, SUMMARY_CHARS)}…` : line;
}
const SUMMARY_CHARS = 160;

function fullSummary(b: AnyBlock): string {
  switch (b.type) {
    case 'heading':
    case 'text':
    case 'button':
      return b.text;
    case 'image':
      return b.alt || b.src;
    case 'divider':
      return '—';
    case 'columns':
      return `${b.columns.length} columns`;
    case 'social':
      return b.links.map((l) => l.network).join(', ');
    case 'footer':
      return b.text ?? b.unsubscribe_text ?? 'Unsubscribe link';
  }
}

export const starterDocument = (): BlockDocument => ({
  preheader: '',
  blocks: [
    { id: 'heading-1', type: 'heading', text: 'Hello {{{NAME|there}}}', level: 1 },
    { id: 'text-1', type: 'text', text: 'Write your message here.' },
    { id: 'button-1', type: 'button', text: 'Read more', href: 'https://example.com' },
    { id: 'footer-1', type: 'footer', text: 'Your company, its postal address' },
  ],
});

export const STARTER_HTML =
  '<h1>Hello {{{NAME|there}}}</h1>\n<p>Write your message here.</p>\n<p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>\n';
