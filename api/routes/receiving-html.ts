// A received email's HTML as a document of its own, for the dashboard's sandboxed frame, as a sent email's is
// (api/routes/email-html.ts): its inline styles apply, no script runs, its own `cid:` images show, remote images only
// when asked (`images=remote`). An `srcdoc` frame would inherit the dashboard's policy: no styles, no images.
import { z } from 'zod';
import { notFound } from '../../shared/errors.ts';
import { fromStored } from '../../shared/receiving/exact-text.ts';
import { attachmentsOf, getReceived } from '../../shared/receiving/query.ts';
import { EMAIL_HTML_CSP, imagesQuery, serveEmailHtml } from './email-html.ts';
import { defineOperation } from './operation.ts';
import { pathId } from './schemas.ts';

export const receivingHtmlOperations = [
  defineOperation({
    tag: 'receiving',
    permission: 'full_access',
    operationId: 'getReceivedEmailHtmlPage',
    method: 'get',
    path: '/emails/receiving/{email_id}/html',
    summary: "Open a received email's HTML page",
    description: `The HTML body of a received email of the team as a document (\`text/html\`), for a sandboxed frame: its policy lets the email's inline styles apply and runs no script. Images are inline (\`data:\`, the email's own \`cid:\` parts among them) and the platform's own only, unless \`images=remote\` (then https images load too, telling their hosts the reader's address): \`${EMAIL_HTML_CSP.inline}\`. 404 when the email is not the team's or has no HTML.`,
    scope: 'receiving:read',
    params: z.object({ email_id: pathId('received email') }),
    query: imagesQuery,
    raw: true,
    response: z.string().optional().describe("The email's HTML, served as text/html"),
    handler: async ({ auth, params, query, deps, ctx }) => {
      const row = await getReceived(deps.db, auth.team.id, params.email_id);
      // Exactly as decoded, as GET /emails/receiving/{email_id} answers it.
      const html = fromStored(row.html, row.html_exact);
      if (html === null) throw notFound('Received email HTML');
      const parts = (await attachmentsOf(deps.db, [row.id])).get(row.id) ?? [];
      return serveEmailHtml(ctx, { html, parts, blobs: deps.blobs, images: query.images });
    },
  }),
];
