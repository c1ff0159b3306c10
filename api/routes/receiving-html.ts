// A received email's HTML as a document of its own, for the dashboard's sandboxed frame, as a sent email's is
// (api/routes/email-html.ts): its inline styles apply, no script runs, its own `cid:` images show, remote images only
// when asked (`images=remote`). An `srcdoc` frame would inherit the dashboard's policy: no styles, no images.
import { fromStored } from '../../shared/receiving/exact-text.ts';
import { attachmentsOf, getReceived } from '../../shared/receiving/query.ts';
import { emailHtmlOperation } from './email-html.ts';

export const receivingHtmlOperations = [
  emailHtmlOperation({
    tag: 'receiving',
    operationId: 'getReceivedEmailHtmlPage',
    path: '/emails/receiving/{email_id}/html',
    kind: 'received',
    scope: 'receiving:read',
    load: async (deps, teamId, id) => {
      const row = await getReceived(deps.db, teamId, id);
      // Exactly as decoded, as GET /emails/receiving/{email_id} answers it.
      const html = fromStored(row.html, row.html_exact);
      return { html, parts: (await attachmentsOf(deps.db, [row.id])).get(row.id) ?? [] };
    },
  }),
];
