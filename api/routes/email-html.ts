// A sent email's HTML as a document of its own, for the dashboard's sandboxed frame (as template previews are
// served: api/routes/template-previews.ts). An `srcdoc` frame would inherit the dashboard's strict policy and show
// the email without its own styles; this page has a policy made for an email: inline styles apply, no script, no
// plugin, no form, framed by this origin only. Remote images load only when asked (`images=remote`): by default
// only inline (data:) images show, so opening an email does not tell a tracking pixel's host the reader's address;
// the email's own inline images (`cid:` parts) show as `data:` URIs. A received email's page is the same
// (api/routes/receiving-html.ts).
import type { Context } from 'koa';
import { z } from 'zod';
import type { AttachmentRow } from '../../shared/attachment-rows.ts';
import type { BlobStore } from '../../shared/blobs.ts';
import { inlineCidImages } from '../../shared/cid-images.ts';
import { getEmail } from '../../shared/emails/store.ts';
import { notFound } from '../../shared/errors.ts';
import { defineOperation } from './operation.ts';
import { pathId } from './schemas.ts';

const policy = (images: string) =>
  [
    "default-src 'none'",
    "style-src 'unsafe-inline'",
    `img-src ${images}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'self'",
    'sandbox allow-popups allow-popups-to-escape-sandbox',
  ].join('; ');

/**
 * The page's policy: inline images and the platform's own (a social link's default icon: no third party learns of the
 * reader), or remote https images too.
 */
export const EMAIL_HTML_CSP = { inline: policy("'self' data:"), remote: policy("'self' https: data:") } as const;

/** `images`: the query of an email's page. */
export const imagesQuery = z.object({
  images: z
    .enum(['inline', 'remote'])
    .default('inline')
    .describe("`remote`: load the email's https images too (their hosts see the reader's address)"),
});

/** Answers an email's HTML as its own page, under the email's policy, its `cid:` images inlined. */
export async function serveEmailHtml(
  ctx: Context,
  page: { html: string; parts: AttachmentRow[]; blobs: BlobStore; images: keyof typeof EMAIL_HTML_CSP },
): Promise<undefined> {
  const html = await inlineCidImages(page.html, page.parts, page.blobs);
  ctx.set('Content-Security-Policy', EMAIL_HTML_CSP[page.images]);
  ctx.set('Cache-Control', 'private, no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = html;
  return undefined;
}

export const emailHtmlOperations = [
  defineOperation({
    tag: 'emails',
    permission: 'full_access',
    operationId: 'getEmailHtmlPage',
    method: 'get',
    path: '/emails/{email_id}/html',
    summary: "Open a sent email's HTML page",
    description: `The HTML body of a sent email of the team as a document (\`text/html\`), for a sandboxed frame: its policy lets the email's inline styles apply and runs no script. Images are inline (\`data:\`, the email's own \`cid:\` images among them) and the platform's own only, unless \`images=remote\` (then https images load too, telling their hosts the reader's address): \`${EMAIL_HTML_CSP.inline}\`. 404 when the email is not the team's or has no HTML.`,
    scope: 'emails:read',
    params: z.object({ email_id: pathId('sent email') }),
    query: imagesQuery,
    raw: true,
    response: z.string().optional().describe("The email's HTML, served as text/html"),
    handler: async ({ auth, params, query, deps, ctx }) => {
      const email = await getEmail(deps.db, auth.team.id, params.email_id);
      if (!email.html) throw notFound('Email HTML');
      const parts = await deps
        .db<AttachmentRow>('email_attachments')
        .where({ email_id: email.id, team_id: auth.team.id })
        .whereNotNull('content_id');
      return serveEmailHtml(ctx, { html: email.html, parts, blobs: deps.blobs, images: query.images });
    },
  }),
];
