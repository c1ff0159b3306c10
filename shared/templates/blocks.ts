// A block document: email content as a list of typed blocks, the model a visual editor edits and a template (later
// a broadcast) holds instead of raw HTML. blocks-render.ts turns it into responsive HTML through MJML and into a
// text part. Every block has an `id` unique in the document, which pre-send checks name as `block_id`. Text fields
// are plain text (escaped when rendered; line breaks kept) and may hold the template's variables
// (`{{{NAME}}}`, `{{#if VIP}}...{{/if}}`): syntax.ts reads each one on its own. Links and images take http(s)
// (links also mailto: and tel:, images cid:), or start with a variable; no other scheme is accepted.
import { z } from 'zod';

export const MAX_BLOCKS = 300;
export const MAX_DOCUMENT_BYTES = 512 * 1024;

const id = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, `_` or `-`')
  .describe("The block's id, unique in the document: 1-64 letters, digits, `_` or `-`. Checks name it as `block_id`.");
const color = (what: string) =>
  z
    .string()
    .regex(/^#(?:[0-9a-fA-F]{3}){1,2}$/, 'must be a #rgb or #rrggbb color')
    .describe(`${what}: a #rgb or #rrggbb color`);
const align = z
  .enum(['left', 'center', 'right'])
  .describe('Horizontal alignment; default `left` (`center` for buttons and images)');
const text = (max: number, what: string) =>
  z.string().max(max).describe(`${what}, plain text up to ${max} characters (line breaks kept); may hold variables`);

const VARIABLE_START = /^\s*\{\{/;
const url = (schemes: RegExp, what: string, allowed: string) =>
  z
    .string()
    .min(1)
    .max(2048)
    .refine((v) => VARIABLE_START.test(v) || schemes.test(v.trim()), `must be ${allowed}, or start with a variable`)
    .describe(`${what}: ${allowed} (up to 2048 characters), or a value starting with a variable such as \`{{{URL}}}\``);
const linkUrl = (what: string) => url(/^(?:https?:\/\/|mailto:|tel:)/i, what, 'an http(s), mailto: or tel: URL');
const imageUrl = (what: string) => url(/^(?:https?:\/\/|cid:)/i, what, 'an http(s) or cid: URL');

export const socialNetworks = [
  'facebook',
  'x',
  'instagram',
  'linkedin',
  'youtube',
  'github',
  'pinterest',
  'web',
] as const;
export type SocialNetwork = (typeof socialNetworks)[number];

const heading = z
  .object({
    id,
    type: z.literal('heading').describe('A title'),
    text: text(1000, 'The title'),
    level: z
      .union([z.literal(1), z.literal(2), z.literal(3)])
      .optional()
      .describe('1 (largest, default), 2 or 3'),
    align: align.optional(),
    color: color('The text color').optional(),
  })
  .meta({ id: 'TemplateBlockHeading' });
const paragraph = z
  .object({
    id,
    type: z.literal('text').describe('A paragraph'),
    text: text(20_000, 'The paragraph'),
    align: align.optional(),
    color: color('The text color').optional(),
    font_size: z.number().int().min(10).max(40).optional().describe('In pixels, 10-40; default 16'),
  })
  .meta({ id: 'TemplateBlockText' });
const image = z
  .object({
    id,
    type: z.literal('image').describe('An image'),
    src: imageUrl('Where the image is'),
    alt: z
      .string()
      .max(500)
      .optional()
      .describe('What the image shows, for screen readers and clients that block images (the alt_text check)'),
    href: linkUrl('Where a click on the image goes').optional(),
    width: z.number().int().min(16).max(800).optional().describe('In pixels, 16-800; default the column width'),
    align: align.optional(),
  })
  .meta({ id: 'TemplateBlockImage' });
const button = z
  .object({
    id,
    type: z.literal('button').describe('A call to action'),
    text: text(200, 'The label').min(1),
    href: linkUrl('Where the button goes'),
    align: align.optional(),
    background_color: color('The button color').optional(),
    color: color('The label color').optional(),
  })
  .meta({ id: 'TemplateBlockButton' });
const divider = z
  .object({
    id,
    type: z.literal('divider').describe('A horizontal rule'),
    color: color('The rule color').optional(),
    thickness: z.number().int().min(1).max(8).optional().describe('In pixels, 1-8; default 1'),
  })
  .meta({ id: 'TemplateBlockDivider' });
const social = z
  .object({
    id,
    type: z.literal('social').describe('Icons linking to social profiles'),
    links: z
      .array(
        z.object({
          network: z.enum(socialNetworks).describe(`One of ${socialNetworks.join(', ')}`),
          href: linkUrl('The profile'),
          icon_src: imageUrl(
            "The icon (24 px); default the platform's own for the network, served under its public URL",
          ).optional(),
        }),
      )
      .min(1)
      .max(12)
      .describe('1-12 profiles, in order'),
    align: align.optional(),
  })
  .meta({ id: 'TemplateBlockSocial' });
const footer = z
  .object({
    id,
    type: z.literal('footer').describe("The footer: who sends, and the recipient's unsubscribe link"),
    text: text(2000, "The sender's name and postal address, or any closing text").optional(),
    unsubscribe_text: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe("The unsubscribe link's words; default `Unsubscribe`. The link is `{{{RESEND_UNSUBSCRIBE_URL}}}`"),
  })
  .meta({ id: 'TemplateBlockFooter' });

const leaf = z.discriminatedUnion('type', [heading, paragraph, image, button, divider, social, footer]);
const columns = z
  .object({
    id,
    type: z.literal('columns').describe('2-4 columns side by side (stacked on narrow screens)'),
    columns: z
      .array(
        z.object({
          blocks: z.array(leaf).max(50).describe("The column's blocks, top to bottom (no columns inside columns)"),
        }),
      )
      .min(2)
      .max(4)
      .describe('The columns, left to right'),
  })
  .meta({ id: 'TemplateBlockColumns' });

export const blockSchema = z.discriminatedUnion('type', [
  heading,
  paragraph,
  image,
  button,
  divider,
  columns,
  social,
  footer,
]);
export type Block = z.infer<typeof blockSchema>;
export type LeafBlock = z.infer<typeof leaf>;

export const fontFamilies = {
  'sans-serif': 'Helvetica, Arial, sans-serif',
  serif: "Georgia, 'Times New Roman', serif",
  monospace: 'Menlo, Consolas, monospace',
} as const;

export const blockDocumentSchema = z
  .object({
    preheader: z
      .string()
      .max(300)
      .optional()
      .describe('The preview text clients show after the subject (hidden in the message); may hold variables'),
    width: z.number().int().min(320).max(800).optional().describe('The content width in pixels, 320-800; default 600'),
    background_color: color('Behind the content').optional(),
    content_background_color: color('Of the content itself').optional(),
    font_family: z
      .enum(Object.keys(fontFamilies) as [keyof typeof fontFamilies])
      .optional()
      .describe('`sans-serif` (default), `serif` or `monospace`'),
    blocks: z
      .array(blockSchema)
      .min(1)
      .max(200)
      .describe('The blocks, top to bottom (1-200; 300 with those inside columns)'),
  })
  .superRefine((doc, ctx) => {
    const seen = new Set<string>();
    let count = 0;
    const visit = (blocks: Block[], path: (string | number)[]) =>
      blocks.forEach((b, i) => {
        count++;
        if (seen.has(b.id))
          ctx.addIssue({ code: 'custom', path: [...path, i, 'id'], message: `\`${b.id}\` is the id of another block` });
        seen.add(b.id);
        if (b.type === 'columns') b.columns.forEach((c, j) => visit(c.blocks, [...path, i, 'columns', j, 'blocks']));
      });
    visit(doc.blocks, ['blocks']);
    if (count > MAX_BLOCKS)
      ctx.addIssue({ code: 'custom', path: ['blocks'], message: `holds ${count} blocks; at most ${MAX_BLOCKS}` });
    const size = Buffer.byteLength(JSON.stringify(doc));
    if (size > MAX_DOCUMENT_BYTES)
      ctx.addIssue({ code: 'custom', path: [], message: `is ${size} bytes as JSON; at most ${MAX_DOCUMENT_BYTES}` });
  })
  .meta({
    id: 'TemplateBlockDocument',
    description: `Email content as blocks (docs/templates.md): rendered through MJML into responsive HTML and a text part when the template is written. Block ids are unique in the document; at most ${MAX_BLOCKS} blocks and ${MAX_DOCUMENT_BYTES / 1024} KB as JSON; columns hold no columns.`,
  });
export type BlockDocument = z.infer<typeof blockDocumentSchema>;

/** Every block of the document with its path (`blocks.2`, `blocks.3.columns.0.blocks.1`), in reading order. */
export function allBlocks(doc: BlockDocument): { block: LeafBlock | Block; path: string }[] {
  const out: { block: LeafBlock | Block; path: string }[] = [];
  doc.blocks.forEach((b, i) => {
    out.push({ block: b, path: `blocks.${i}` });
    if (b.type === 'columns')
      b.columns.forEach((c, j) =>
        c.blocks.forEach((inner, k) => out.push({ block: inner, path: `blocks.${i}.columns.${j}.blocks.${k}` })),
      );
  });
  return out;
}
