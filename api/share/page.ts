// The page a share link opens in a browser (GET /share/{token} asking for HTML; other clients get the JSON view). The
// email's HTML is shown as the recipient's mail client would, inside a sandboxed frame: `srcdoc`, `sandbox` without
// allow-scripts or allow-same-origin (no script runs, the content has no origin of its own and reaches no cookie), its
// links opening in a new tab; the page's Content-Security-Policy (which the frame inherits) loads no script, no font,
// no frame from elsewhere, and images only over https or inline. It shows the email as stored, before delivery, so
// it carries none of the tracking a recipient's copy has (no pixel, no rewritten link): opening it records nothing.
// An expired link and a link that is not one of ours each get a page of their own that says so.
import type { Context } from 'koa';

export interface SharedEmail {
  from: string;
  to: string[];
  subject: string;
  created_at: string;
  html: string | null;
  text: string | null;
  expires_at: string;
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export const SHARE_PAGE_CSP = [
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  "img-src 'self' https: data:",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const STYLE = `html,body{height:100%;margin:0}body{display:flex;flex-direction:column;font:15px/1.5 system-ui,sans-serif;color:#1f2328;background:#f6f8fa}
header{padding:1rem 1.5rem;background:#fff;border-bottom:1px solid #d0d7de}h1{font-size:1.25rem;margin:0 0 .5rem;overflow-wrap:anywhere}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;margin:0}dt{color:#59636e}dd{margin:0;overflow-wrap:anywhere}
.note{margin:.5rem 0 0;font-size:.85rem;color:#59636e}iframe{flex:1;width:100%;border:0;background:#fff;min-height:24rem}
main{max-width:36rem;margin:4rem auto;padding:0 1rem}`;

function page(ctx: Context, status: number, title: string, body: string): undefined {
  ctx.set('Content-Security-Policy', SHARE_PAGE_CSP);
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Robots-Tag', 'noindex, nofollow');
  ctx.set('Cache-Control', 'no-store');
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
  return undefined;
}

/**
 * The email as its own document in the frame: links open in a new tab, no referrer leaves. Its base is about:blank, so
 * a relative URL in the email (mail has no page to be relative to) resolves to nothing instead of to this page's
 * server.
 */
function frameDocument(email: SharedEmail): string {
  const head =
    '<meta charset="utf-8"><meta name="referrer" content="no-referrer"><base href="about:blank" target="_blank">';
  if (email.html !== null) return head + email.html;
  return `${head}<pre style="white-space:pre-wrap;font:14px/1.5 ui-monospace,monospace;margin:1rem">${escapeHtml(email.text ?? '')}</pre>`;
}

export function sharedEmailPage(ctx: Context, email: SharedEmail): undefined {
  const when = (iso: string) => iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  return page(
    ctx,
    200,
    email.subject || '(no subject)',
    `<header><h1>${escapeHtml(email.subject || '(no subject)')}</h1><dl>
<dt>From</dt><dd>${escapeHtml(email.from)}</dd><dt>To</dt><dd>${escapeHtml(email.to.join(', '))}</dd>
<dt>Sent</dt><dd>${when(email.created_at)}</dd></dl>
<p class="note">A shared copy of this email, read-only. The link stops working at ${when(email.expires_at)}.</p></header>
<iframe title="The email" sandbox="allow-popups allow-popups-to-escape-sandbox" referrerpolicy="no-referrer" srcdoc="${escapeHtml(frameDocument(email))}"></iframe>`,
  );
}

export function expiredSharePage(ctx: Context): undefined {
  return page(
    ctx,
    410,
    'This link has expired',
    '<main><h1>This link has expired</h1><p>Share links work for a limited time. Ask whoever sent it to share the email again.</p></main>',
  );
}

export function invalidSharePage(ctx: Context): undefined {
  return page(
    ctx,
    404,
    'Link not found',
    '<main><h1>Link not found</h1><p>This share link is not valid. If you copied it, check that it is complete; otherwise ask whoever sent it to share the email again.</p></main>',
  );
}

/** Does the client ask for a page (a browser), rather than JSON? */
export const wantsPage = (ctx: Context) => ctx.accepts('json', 'html') === 'html';
