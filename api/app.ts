// The middleware chain: request id → metrics and request log line → error translator → security headers → the
// mail's images (/email-assets/) → User-Agent → the reference page (/docs) → the OAuth authorization server (/oauth)
// → the account page (/account) → the dashboard (/, /assets/) → routes (the MCP server's among them) → 404/405.
import Koa from 'koa';
import { ServiceError } from '../shared/errors.ts';
import type { ApiDeps } from './deps.ts';
import { buildRouter, routesMiddleware } from './router.ts';
import { operations } from './routes/index.ts';
import type { Operation } from './routes/operation.ts';
import { errorHandler } from './middleware/errors.ts';
import { requestId, requireUserAgent, securityHeaders } from './middleware/basics.ts';
import { requestLogWriter } from '../shared/logs/writer.ts';
import { apiReference } from './reference/page.ts';
import { apiMetrics } from '../shared/metrics/api.ts';
import { observeRequests } from './middleware/observe.ts';
import { TemplateCache } from '../shared/templates/send.ts';
import { accountPages } from './account/page.ts';
import { dashboard } from './dashboard/serve.ts';
import { emailAssets } from './email-assets.ts';
import { createOAuthServer } from './oauth/server.ts';
import { scopeList } from '../shared/oauth/scopes.ts';
import { mcpEndpoint } from './mcp/endpoint.ts';

/** `ops` defaults to every operation the api serves; tests pass their own list to mount test-only routes. */
export function createApp(given: ApiDeps, ops: Operation[] = operations): Koa {
  const metrics = given.metrics ?? apiMetrics();
  // Made on the caller's deps, so whoever made the app can close it (its revocation channel, api/oauth/server.ts).
  const oauth = (given.oauth ??= createOAuthServer(given, scopeList(ops.map((op) => op.scope))));
  const deps: ApiDeps = {
    ...given,
    requestLogs: given.requestLogs ?? requestLogWriter(given.db, given.log),
    metrics,
    templates: given.templates ?? new TemplateCache(),
    oauth,
  };
  deps.mcp = mcpEndpoint(deps, ops);
  const app = new Koa({ proxy: deps.config.TRUST_PROXY });
  app.silent = true;
  const router = buildRouter(ops, deps);
  app.use(requestId);
  app.use(observeRequests(deps.log, metrics));
  app.use(errorHandler(deps.log));
  app.use(securityHeaders);
  // The images rendered mail points at (a social block's default icons, api/email-assets.ts): for mail clients and
  // image proxies, which need no User-Agent of ours.
  app.use(emailAssets);
  app.use(requireUserAgent);
  // What the router left unanswered: an unknown path (404) or a known path with another method (405, with the
  // Allow header @koa/router set). OPTIONS answers its Allow header with an empty JSON object.
  app.use(async (ctx, next) => {
    await next();
    if (ctx.method === 'OPTIONS' && ctx.status === 200 && !ctx.body) ctx.body = {};
    if (ctx.body !== undefined) return;
    if (ctx.status === 405 || ctx.status === 501)
      throw new ServiceError('method_not_allowed', 'Method not allowed for this path.');
    if (ctx.status === 404) throw new ServiceError('not_found', 'Route not found.');
  });
  app.use(apiReference(deps.config.PUBLIC_BASE_URL));
  // The OAuth authorization server under /oauth and its metadata (docs/oauth.md). The MCP server at /mcp and the
  // protected resource metadata are routes (api/routes/mcp.ts, docs/mcp.md).
  app.use(oauth.middleware);
  // The account page (sign-up, sign-in, MFA) until the dashboard replaces it (docs/accounts.md).
  app.use(accountPages);
  // The dashboard (web/): its page at / and its page URLs, its files under /assets/ (docs/dashboard.md).
  app.use(dashboard());
  app.use(routesMiddleware(router));
  return app;
}
