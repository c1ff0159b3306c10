// A document the api serves for the dashboard's sandboxed frames (an email's HTML, a template's preview): under its
// own policy, never cached, no referrer sent on, its type not sniffed.
import type { Context } from 'koa';

export function serveHtmlPage(ctx: Context, page: { html: string; csp: string; cache: string }): undefined {
  ctx.set('Content-Security-Policy', page.csp);
  ctx.set('Cache-Control', page.cache);
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = page.html;
  return undefined;
}
