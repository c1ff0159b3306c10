// Previews of unsaved template content (shared/templates/preview.ts): what the dashboard's editor renders while its
// user types. A preview writes nothing but its rendered HTML, kept a while for its own page: GET answers that HTML as
// a document of its own, under a policy made for an email (inline styles apply; no script, no plugin, no form; images
// over https or inline; framed by this origin only), so the dashboard can show it in a sandboxed frame.
import { z } from 'zod';
import { notFound } from '../../shared/errors.ts';
import { PREVIEW_TTL_SECONDS, previewContent, previewHtml } from '../../shared/templates/preview.ts';
import { serveHtmlPage } from './html-page.ts';
import { defineOperation } from './operation.ts';
import { emailCheck, fields } from './template-schemas.ts';

export const PREVIEW_PAGE_CSP = [
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  // The platform's own images (a social link's default icon) load on an http:// platform too.
  "img-src 'self' https: data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'self'",
  'sandbox allow-popups allow-popups-to-escape-sandbox',
].join('; ');

const previewBody = z
  .object({
    subject: fields.subject,
    from: fields.from,
    reply_to: fields.reply_to,
    html: fields.html,
    text: fields.text,
    document: fields.document,
    variables: fields.variables,
    values: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('Sample values of the variables, as a send gives them; a variable without one takes its fallback'),
    list_unsubscribe: z
      .boolean()
      .default(false)
      .describe('Check it as sent with a List-Unsubscribe header (under a topic): the unsubscribe check'),
  })
  .meta({ id: 'TemplatePreviewRequest' });

const preview = z
  .object({
    object: z.literal('template_preview'),
    id: z.string().describe(`The preview's id: its page is GET /template-previews/{id} for ${PREVIEW_TTL_SECONDS} s`),
    subject: z.string().nullable().describe('The subject as rendered'),
    html: z.string().describe('The HTML as rendered'),
    text: z.string().describe('The text part as rendered (made from the html when the content has none)'),
    status: z.enum(['fail', 'warn', 'pass']).describe('The worst status among the checks'),
    checks: z.array(emailCheck).describe('Every pre-send check on the rendered message (without the network)'),
  })
  .meta({ id: 'TemplatePreview' });

const worst = (checks: { status: string }[]): 'fail' | 'warn' | 'pass' =>
  checks.some((c) => c.status === 'fail') ? 'fail' : checks.some((c) => c.status === 'warn') ? 'warn' : 'pass';

const base = { tag: 'templates', permission: 'full_access', role: 'viewer' } as const;

export const templatePreviewOperations = [
  defineOperation({
    ...base,
    operationId: 'previewTemplate',
    method: 'post',
    path: '/template-previews',
    summary: 'Preview template content',
    description: [
      'Render template content that is not saved (the body of a create, without its name) as a send would: checked as a write is (a mistake is 422 naming the field, `details.block_id` in a document), filled with the sample `values` and the fallbacks, and read by every pre-send check (without the network). Nothing is written.',
      '',
      `The rendered HTML is kept for ${PREVIEW_TTL_SECONDS} s as a page of its own, \`GET /template-previews/{id}\`, which a dashboard shows in a sandboxed frame. A viewer may preview.`,
    ].join('\n'),
    scope: 'templates:read',
    status: 201,
    body: previewBody,
    response: preview,
    handler: async ({ auth, body, deps }) => {
      const { values, list_unsubscribe: listUnsubscribe, ...input } = body;
      const p = await previewContent(deps, auth.team.id, input, values, listUnsubscribe);
      return { object: 'template_preview' as const, ...p, status: worst(p.checks) };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'getTemplatePreviewPage',
    method: 'get',
    path: '/template-previews/{preview_id}',
    summary: "Open a template preview's page",
    description: `The rendered HTML of a preview of the team as a document (\`text/html\`), for a sandboxed frame: its policy lets the email's inline styles apply and runs no script (\`${PREVIEW_PAGE_CSP}\`). 404 once it expired.`,
    scope: 'templates:read',
    params: z.object({
      preview_id: z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,64}$/)
        .describe("The preview's id"),
    }),
    raw: true,
    response: z.string().optional().describe('The rendered HTML, served as text/html'),
    handler: async ({ auth, params, deps, ctx }) => {
      const html = await previewHtml(deps, auth.team.id, params.preview_id);
      if (html === null) throw notFound('Template preview');
      return serveHtmlPage(ctx, { html, csp: PREVIEW_PAGE_CSP, cache: 'no-store' });
    },
  }),
];
