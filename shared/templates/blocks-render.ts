// A block document (blocks.ts) rendered once, when the template is written: responsive, client-safe HTML through
// MJML (validation `strict`; the tree is handed to MJML as JSON, never as MJML text, so no value can change its
// structure), and a text part written from the blocks themselves. Both keep the template's variables as written:
// they are the html and text the engine compiles and fills per send, so MJML's cost is paid per write, never per
// send. Text is escaped here (MJML inserts content and attributes as given). MJML (some 500 modules) is loaded on the
// first render, not with the process: most processes and tests never render a block document.
import type mjml2htmlType from 'mjml';
import { fontFamilies, type Block, type BlockDocument, type LeafBlock } from './blocks.ts';
import { UNSUBSCRIBE_PLACEHOLDER } from './syntax.ts';
import { socialIconUrl } from './social-icons.ts';
import { ServiceError } from '../errors.ts';

interface MjmlNode {
  tagName: string;
  attributes: Record<string, string>;
  children?: MjmlNode[];
  content?: string;
}

const escapeText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeLines = (s: string) => escapeText(s).replace(/\r?\n/g, '<br />');
const escapeAttribute = (s: string) => escapeText(s).replace(/"/g, '&quot;');

/** Attributes without the unset ones, escaped. */
function attrs(values: Record<string, string | number | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) if (v !== undefined) out[k] = escapeAttribute(String(v));
  return out;
}

const node = (tagName: string, attributes: Record<string, string>, more: Partial<MjmlNode> = {}): MjmlNode => ({
  tagName,
  attributes,
  ...more,
});

const HEADING_SIZES = { 1: 28, 2: 22, 3: 18 } as const;
const DEFAULT_UNSUBSCRIBE = 'Unsubscribe';

function leafNodes(b: LeafBlock, publicBaseUrl: string): MjmlNode[] {
  switch (b.type) {
    case 'heading': {
      const level = b.level ?? 1;
      const size = HEADING_SIZES[level];
      const content = `<h${level} style="margin:0;font-size:${size}px;line-height:1.25;font-weight:700">${escapeLines(b.text)}</h${level}>`;
      return [node('mj-text', attrs({ align: b.align, color: b.color }), { content })];
    }
    case 'text':
      return [
        node('mj-text', attrs({ align: b.align, color: b.color, 'font-size': b.font_size && `${b.font_size}px` }), {
          content: escapeLines(b.text),
        }),
      ];
    case 'image':
      return [
        node(
          'mj-image',
          attrs({ src: b.src, alt: b.alt, href: b.href, width: b.width && `${b.width}px`, align: b.align }),
        ),
      ];
    case 'button':
      return [
        node(
          'mj-button',
          attrs({ href: b.href, align: b.align, 'background-color': b.background_color, color: b.color }),
          { content: escapeText(b.text) },
        ),
      ];
    case 'divider':
      return [
        node('mj-divider', attrs({ 'border-color': b.color, 'border-width': b.thickness && `${b.thickness}px` })),
      ];
    case 'social':
      return [
        node('mj-social', attrs({ align: b.align, mode: 'horizontal', 'icon-size': '24px' }), {
          children: b.links.map((l) =>
            node(
              'mj-social-element',
              attrs({
                name: `${l.network}-noshare`,
                href: l.href,
                // MJML's own default is an image on mailjet.com: every recipient's client would fetch it there.
                src: l.icon_src ?? socialIconUrl(publicBaseUrl, l.network),
                alt: l.network,
              }),
              {
                content: '',
              },
            ),
          ),
        }),
      ];
    case 'footer': {
      const words = escapeText(b.unsubscribe_text ?? DEFAULT_UNSUBSCRIBE);
      const link = `<a href="${UNSUBSCRIBE_PLACEHOLDER}" style="color:inherit">${words}</a>`;
      const content = b.text ? `${escapeLines(b.text)}<br /><br />${link}` : link;
      return [node('mj-text', attrs({ align: 'center', color: '#6b7280', 'font-size': '12px' }), { content })];
    }
  }
}

const section = (doc: BlockDocument, columns: MjmlNode[]) =>
  node('mj-section', attrs({ 'background-color': doc.content_background_color }), { children: columns });
const column = (children: MjmlNode[]) => node('mj-column', {}, { children });

/** The document as MJML's JSON tree: consecutive blocks share a section; a columns block has its own. */
export function mjmlTree(doc: BlockDocument, publicBaseUrl: string): MjmlNode {
  const sections: MjmlNode[] = [];
  let run: MjmlNode[] = [];
  const flush = () => {
    if (run.length) sections.push(section(doc, [column(run)]));
    run = [];
  };
  for (const b of doc.blocks) {
    if (b.type !== 'columns') {
      run.push(...leafNodes(b, publicBaseUrl));
      continue;
    }
    flush();
    sections.push(
      section(
        doc,
        b.columns.map((c) => column(c.blocks.flatMap((leaf) => leafNodes(leaf, publicBaseUrl)))),
      ),
    );
  }
  flush();
  const head: MjmlNode[] = [
    node(
      'mj-attributes',
      {},
      {
        children: [
          node('mj-all', attrs({ 'font-family': fontFamilies[doc.font_family ?? 'sans-serif'] })),
          node('mj-text', attrs({ 'font-size': '16px', 'line-height': '1.5', color: '#111827' })),
        ],
      },
    ),
  ];
  if (doc.preheader) head.push(node('mj-preview', {}, { content: escapeText(doc.preheader) }));
  return node(
    'mjml',
    {},
    {
      children: [
        node('mj-head', {}, { children: head }),
        node('mj-body', attrs({ width: `${doc.width ?? 600}px`, 'background-color': doc.background_color }), {
          children: sections,
        }),
      ],
    },
  );
}

function leafText(b: LeafBlock): string {
  switch (b.type) {
    case 'heading':
    case 'text':
      return b.text;
    case 'image':
      return [b.alt ? `[${b.alt}]` : '', b.href ? `(${b.href})` : ''].filter(Boolean).join(' ');
    case 'button':
      return `${b.text}: ${b.href}`;
    case 'divider':
      return '---';
    case 'social':
      return b.links.map((l) => `${l.network}: ${l.href}`).join('\n');
    case 'footer':
      return [b.text, `${b.unsubscribe_text ?? DEFAULT_UNSUBSCRIBE}: ${UNSUBSCRIBE_PLACEHOLDER}`]
        .filter(Boolean)
        .join('\n\n');
  }
}

/** The text part: each block's words (links after their label), blocks apart by a blank line. */
export function documentText(doc: BlockDocument): string {
  const parts = doc.blocks.flatMap((b: Block) =>
    b.type === 'columns' ? b.columns.flatMap((c) => c.blocks.map(leafText)) : [leafText(b)],
  );
  return parts.filter((p) => p !== '').join('\n\n');
}

let mjml: Promise<typeof mjml2htmlType> | undefined;

/**
 * The document's HTML (MJML, strict) and text. A document MJML refuses is a 422 naming `document`. `publicBaseUrl`
 * serves the images the platform provides (a social link's default icon: api/email-assets.ts).
 */
export async function renderDocument(
  doc: BlockDocument,
  publicBaseUrl: string,
): Promise<{ html: string; text: string }> {
  const mjml2html = await (mjml ??= import('mjml').then(
    (m) => (m as unknown as { default: typeof mjml2htmlType }).default,
  ));
  let html: string;
  try {
    // No web fonts, no icons of MJML's host: nothing in the message loads from a host its sender did not name.
    ({ html } = await mjml2html(mjmlTree(doc, publicBaseUrl) as never, {
      validationLevel: 'strict',
      fonts: {},
      keepComments: false,
    }));
  } catch (err) {
    const message = (err as { errors?: { message: string }[] }).errors?.[0]?.message ?? 'MJML could not render it';
    throw new ServiceError('validation_error', `Invalid \`document\`: ${message}.`, {
      errors: [{ path: 'document', message }],
    });
  }
  return { html, text: documentText(doc) };
}
