// Turns the declared operations into routes: every operation is served at `/` and under `/api/v1`, with the
// checks its declaration names run in one fixed order before the handler.
import Router from '@koa/router';
import type Koa from 'koa';
import type { Context } from 'koa';
import { newId } from '../shared/ids.ts';
import { ServiceError } from '../shared/errors.ts';
import type { ApiDeps } from './deps.ts';
import type { Auth, Operation } from './routes/operation.ts';
import { checkPermission, identifyCaller } from './middleware/auth.ts';
import { checkCsrf, identifySession } from './middleware/session.ts';
import type { ActiveSession } from '../shared/accounts/sessions.ts';
import { rateLimit } from './middleware/rate-limit.ts';
import { readJsonBody } from './middleware/body.ts';
import { withIdempotency } from './middleware/idempotency.ts';
import type { Reservation } from '../shared/idempotency/store.ts';
import { parseBody, parseParams, parseQuery } from './middleware/validate.ts';
import { sendError } from './middleware/errors.ts';

export const BASE_PATHS = ['', '/api/v1'];

/** `/api-keys/{id}` → `/api-keys/:id` */
export function koaPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

function resourceName(op: Operation): string {
  return op.tag
    .replace(/ies$/, 'y')
    .replace(/s$/, '')
    .replace(/-/g, ' ')
    .replace(/^./, (c) => c.toUpperCase())
    .replace(/^Api key/, 'API key')
    .replace(/^Receiving$/, 'Received email');
}

async function runOperation(
  op: Operation,
  ctx: Context,
  deps: ApiDeps,
  auth: Auth | undefined,
  session?: ActiveSession & { token: string },
): Promise<void> {
  if (op.notImplemented) {
    throw new ServiceError(
      'not_implemented',
      `The ${op.tag} area is not built yet on this platform (${op.method.toUpperCase()} ${op.path}).`,
    );
  }
  // The public files and pages (no key) keep one 404 for everything they do not serve, a malformed id included.
  const params = op.params
    ? parseParams(op.params, ctx.params, op.permission === 'none' ? { notFound: resourceName(op) } : {})
    : undefined;
  const query = op.query ? parseQuery(op.query, ctx.query) : undefined;
  let rawBody: unknown;
  let body: unknown;
  if (op.body) {
    rawBody = await readJsonBody(ctx, op.bodyLimit ?? deps.config.BODY_LIMIT_BYTES);
    ctx.state.requestBody = rawBody;
    body = parseBody(op.body, rawBody);
  }
  const handle = async (reservation: Reservation | null) => {
    const result = await op.handler({
      params,
      query,
      body,
      auth: auth as Auth,
      session: session ?? auth?.session,
      deps,
      ctx,
      reservation,
    } as never);
    if (op.raw) return;
    if (deps.config.NODE_ENV === 'test') {
      const check = op.response.safeParse(result);
      if (!check.success) {
        deps.log.error({ operationId: op.operationId, issues: check.error.issues }, 'response.schema_mismatch');
        throw new Error(`response of ${op.operationId} does not match its declared schema`);
      }
    }
    ctx.status = ctx.state.statusOverride ?? op.status ?? 200;
    ctx.body = result;
  };
  if (op.idempotent && auth)
    await withIdempotency(ctx, deps, auth, rawBody, op.idempotent === 'answered-in-commit', handle);
  else await handle(null);
}

/**
 * A `session` operation (the auth and teams areas): an API key is refused (spec, Authentication 6), the session
 * cookie must name a live session, and a write passes the CSRF defence (middleware/session.ts).
 */
function sessionHandler(op: Operation, deps: ApiDeps) {
  return async (ctx: Context) => {
    ctx.state.route = op.path;
    if (ctx.get('authorization'))
      throw new ServiceError('restricted_api_key', 'This operation cannot be called with an API key.');
    const session = await identifySession(ctx, deps);
    checkCsrf(ctx, deps, session.token);
    await runOperation(op, ctx, deps, undefined, session);
  };
}

function handlerFor(op: Operation, deps: ApiDeps) {
  // `none` runs without a credential, and so does a `null` operation that checks its own OAuth token (oauthOnly:
  // /mcp); `session` needs the session cookie; any other `null` operation fails closed: no API key or session
  // reaches it (missing_api_key, or restricted_api_key from checkPermission), and an OAuth token is refused too.
  if (op.permission === 'none' || (op.permission === null && op.oauthOnly)) {
    return (ctx: Context) => {
      ctx.state.route = op.path;
      return runOperation(op, ctx, deps, undefined);
    };
  }
  if (op.permission === 'session') return sessionHandler(op, deps);
  return async (ctx: Context) => {
    // The declared path, for the metrics and the request log line (middleware/observe.ts), whatever the answer.
    ctx.state.route = op.path;
    const auth = await identifyCaller(ctx, deps, op);
    const started = performance.now();
    ctx.state.auth = auth;
    try {
      // Rate limit first: a valid key refused for its permission is still an authenticated request (CONTRACT:
      // every authenticated response carries the ratelimit headers) and counts against the team's limit.
      await rateLimit(ctx, deps, auth);
      checkPermission(op, auth);
      await runOperation(op, ctx, deps, auth);
    } catch (err) {
      sendError(ctx, err, deps.log);
    }
    const logId = newId();
    ctx.set('X-Request-Log-Id', logId);
    await deps.requestLogs?.record({
      id: logId,
      team_id: auth.team.id,
      api_key_id: auth.key?.id ?? null,
      oauth_grant_id: auth.oauth?.grantId ?? null,
      method: ctx.method,
      endpoint: ctx.path,
      response_status: ctx.status,
      user_agent: ctx.get('user-agent') || null,
      duration_ms: Math.round(performance.now() - started),
      request_body: ctx.state.requestBody,
      response_body: ctx.body,
    });
  };
}

/** Static segments win over parameters (`/emails/receiving` before `/emails/{id}`): the first match answers. */
function specificity(path: string): string {
  return path
    .split('/')
    .map((s) => (s.startsWith('{') ? '1' : '0'))
    .join('');
}

export function buildRouter(operations: Operation[], deps: ApiDeps): Router {
  const router = new Router();
  const seen = new Set<string>();
  const ordered = [...operations].sort((a, b) => specificity(a.path).localeCompare(specificity(b.path)));
  for (const op of ordered) {
    const id = `${op.method} ${op.path}`;
    if (seen.has(id)) throw new Error(`operation declared twice: ${id}`);
    seen.add(id);
    const handler = handlerFor(op, deps);
    for (const base of BASE_PATHS) router.register(base + koaPath(op.path), [op.method.toUpperCase()], handler);
  }
  return router;
}

/**
 * Where a path's routes are: its base and its first segment after it (`/api/v1 emails` for `/api/v1/emails/x`), in
 * lower case, as the router matches without regard to case.
 */
function shelfOf(path: string): string {
  const s = path.toLowerCase().split('/', 4);
  return s[1] === 'api' && s[2] === 'v1' ? `/api/v1 ${s[3] ?? ''}` : ` ${s[1] ?? ''}`;
}

/**
 * The routes as middleware, then their 404/405/501 and OPTIONS answers (@koa/router's allowedMethods). A router
 * tries every route's pattern on every request (456 of them); here a request tries only the routes of its first
 * path segment, each segment's routes a router of their own, which answers exactly as the whole router would: every
 * path a route matches has that route's first segment, which is never a parameter (checked here).
 */
export function routesMiddleware(router: Router): Koa.Middleware {
  const shelves = new Map<string, Router>();
  for (const layer of router.stack) {
    const shelf = shelfOf(String(layer.path));
    if (shelf.includes(':')) throw new Error(`a route's first segment must not be a parameter: ${String(layer.path)}`);
    if (!shelves.has(shelf)) shelves.set(shelf, new Router());
    shelves.get(shelf)!.stack.push(layer);
  }
  const serve = (r: Router): Koa.Middleware => {
    const routes = r.routes() as unknown as Koa.Middleware;
    const answers = r.allowedMethods() as unknown as Koa.Middleware;
    return (ctx, next) => routes(ctx, () => answers(ctx, next));
  };
  const served = new Map([...shelves].map(([shelf, r]) => [shelf, serve(r)]));
  // A path no route has: what the whole router does then (an unknown method is still 501, then 405).
  const none = serve(new Router());
  return (ctx, next) => (served.get(shelfOf(ctx.path)) ?? none)(ctx, next);
}
