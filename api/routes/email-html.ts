// A sent email's HTML as a document of its own, for the dashboard's sandboxed frame (as template previews are
// served: api/routes/template-previews.ts). An `srcdoc` frame would inherit the dashboard's strict policy and show
// the email without its own styles; this page has a policy made for an email: inline styles apply, no script, no
// plugin, no form, framed by this origin only. Remote images load only when asked (`images=remote`): by default
// only inline (data:) images show, so opening an email does not tell a tracking pixel's host the reader's address;
// the email's own inline images (`cid:` parts) show as `data:` URIs. A received email's page is the same
// (api/routes/receiving-html.ts).
import { z } from 'zod';
import type { AttachmentRow } from '../../shared/attachment-rows.ts';
import { inlineCidImages } from '../../shared/cid-images.ts';
import { getEmail } from '../../shared/emails/store.ts';
import { notFound } from '../../shared/errors.ts';
import type { ApiDeps } from '../deps.ts';
import { serveHtmlPage } from './html-page.ts';
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

interface EmailHtmlPage {
  tag: 'emails' | 'receiving';
  operationId: string;
  path: string;
  kind: 'sent' | 'received';
  scope: string;
  /** The team's email's HTML (null: it has none) and its parts (those with a Content-ID count); 404 when not found. */
  load(deps: ApiDeps, teamId: string, id: string): Promise<{ html: string | null; parts: AttachmentRow[] }>;
}

/** The route of an email's page: the HTML as a document under the email's policy, its `cid:` images inlined. */
export function emailHtmlOperation(page: EmailHtmlPage) {
  return defineOperation({
    tag: page.tag,
    permission: 'full_access',
    operationId: page.operationId,
    method: 'get',
    path: page.path,
    summary: `Open a ${page.kind} email's HTML page`,
    description: `The HTML body of a ${page.kind} email of the team as a document (\`text/html\`), for a sandboxed frame: its policy lets the email's inline styles apply and runs no script. Images are inline (\`data:\`, the email's own \`cid:\` images among them) and the platform's own only, unless \`images=remote\` (then https images load too, telling their hosts the reader's address): \`${EMAIL_HTML_CSP.inline}\`. 404 when the email is not the team's or has no HTML.`,
    scope: page.scope,
    params: z.object({ email_id: pathId(`${page.kind} email`) }),
    query: z.object({
      images: z
        .enum(['inline', 'remote'])
        .default('inline')
        .describe("`remote`: load the email's https images too (their hosts see the reader's address)"),
    }),
    raw: true,
    response: z.string().optional().describe("The email's HTML, served as text/html"),
    handler: async ({ auth, params, query, deps, ctx }) => {
      const email = await page.load(deps, auth.team.id, params.email_id);
      if (email.html === null) throw notFound('Email HTML');
      const html = await inlineCidImages(email.html, email.parts, deps.blobs);
      return serveHtmlPage(ctx, { html, csp: EMAIL_HTML_CSP[query.images], cache: 'private, no-store' });
    },
  });
}

export const emailHtmlOperations = [
  emailHtmlOperation({
    tag: 'emails',
    operationId: 'getEmailHtmlPage',
    path: '/emails/{email_id}/html',
    kind: 'sent',
    scope: 'emails:read',
    load: async (deps, teamId, id) => {
      const email = await getEmail(deps.db, teamId, id);
      const parts = await deps
        .db<AttachmentRow>('email_attachments')
        .where({ email_id: email.id, team_id: teamId })
        .whereNotNull('content_id');
      return { html: email.html || null, parts };
    },
  }),
];
