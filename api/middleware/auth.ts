// Bearer API keys. Which keys reach an operation is read from its declaration, never decided in a handler.
import type { Context } from 'koa';
import { authenticate } from '../../shared/api-keys/keys.ts';
import { ServiceError } from '../../shared/errors.ts';
import type { ApiDeps } from '../deps.ts';
import { sessionRole, type Auth, type Operation } from '../routes/operation.ts';
import { roleRank } from '../../shared/accounts/sessions.ts';
import { checkCsrf, identifySession, sessionCookie } from './session.ts';
import { resources } from '../oauth/provider.ts';

const messages = {
  invalid_api_key: 'API key is invalid.',
  suspended_api_key: 'This API key belongs to a suspended team.',
} as const;

export async function identify(ctx: Context, deps: ApiDeps): Promise<Auth> {
  const header = ctx.get('authorization');
  if (!header)
    throw new ServiceError(
      'missing_api_key',
      'Missing API key in the authorization header. Include the header `Authorization: Bearer rk_...`.',
    );
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new ServiceError('invalid_api_key', messages.invalid_api_key);
  if (!match[1].startsWith('rk_') && deps.oauth) return identifyToken(deps, match[1]);
  const result = await authenticate(deps.db, match[1]);
  if (!result.ok) throw new ServiceError(result.error, messages[result.error]);
  return { key: result.key, team: result.team };
}

/** An OAuth access token (docs/oauth.md): bound to this API (RFC 8707), of a live grant, of an active team. */
async function identifyToken(deps: ApiDeps, token: string): Promise<Auth> {
  const caller = await deps.oauth!.verify(token);
  if (!caller)
    throw new ServiceError('invalid_api_key', 'API key or OAuth access token is invalid (or expired, or revoked).');
  const api = resources(deps.config).api;
  if (caller.audience !== api)
    throw new ServiceError(
      'invalid_api_key',
      `This OAuth access token was issued for another resource (${caller.audience}); this API takes tokens for ${api}.`,
    );
  if (caller.team.status === 'suspended') throw new ServiceError('suspended_api_key', messages.suspended_api_key);
  return { key: null, team: caller.team, oauth: caller };
}

/** An OAuth token reaches an operation whose x-service-scope it holds, within the granting member's role. */
function checkScope(op: Operation, auth: Auth): void {
  const oauth = auth.oauth!;
  if (op.scope === null)
    throw new ServiceError(
      'invalid_permission',
      op.tokenRefusal ?? 'No OAuth scope reaches this operation: it needs a full_access API key.',
      { status: 403 },
    );
  if (!oauth.scopes.has(op.scope))
    throw new ServiceError('invalid_permission', `This OAuth access token lacks the scope \`${op.scope}\`.`, {
      status: 403,
    });
  const need = sessionRole(op);
  if (roleRank[oauth.role] < roleRank[need])
    throw new ServiceError(
      'invalid_permission',
      `This needs the ${need} role in the team; the person who granted this token is ${oauth.role}.`,
      { status: 403 },
    );
}

/**
 * A dashboard session on an API route (docs/accounts.md): `full_access` and `sending_access` routes take one
 * (without an Authorization header), acting on the session's current team; the member's role must reach the
 * route's (Operation.role), and a write passes the CSRF defence. `store_access` routes take none.
 */
export async function identifySessionCaller(ctx: Context, deps: ApiDeps, op: Operation): Promise<Auth> {
  const active = await identifySession(ctx, deps);
  checkCsrf(ctx, deps, active.token);
  if (!active.team || !active.role)
    throw new ServiceError('invalid_permission', 'No current team: create a team or switch to one first.', {
      status: 403,
    });
  if (active.team.status === 'suspended') throw new ServiceError('suspended_api_key', messages.suspended_api_key);
  const need = sessionRole(op);
  if (roleRank[active.role] < roleRank[need])
    throw new ServiceError('invalid_permission', `This needs the ${need} role in the team; yours is ${active.role}.`, {
      status: 403,
    });
  return { key: null, team: active.team, session: active };
}

/** The caller of an API route: the bearer key, or else the session cookie where the route takes a session. */
export function identifyCaller(ctx: Context, deps: ApiDeps, op: Operation): Promise<Auth> {
  const bySession =
    !ctx.get('authorization') &&
    (op.permission === 'full_access' || op.permission === 'sending_access') &&
    sessionCookie(ctx, deps) !== undefined;
  return bySession ? identifySessionCaller(ctx, deps, op) : identify(ctx, deps);
}

/** full_access reaches every key route; a narrower key reaches only routes declared with its own permission. */
export function checkPermission(op: Operation, auth: Auth): void {
  if (op.permission === 'session' || op.permission === null) {
    throw new ServiceError('restricted_api_key', 'This operation cannot be called with an API key.');
  }
  if (auth.oauth) return checkScope(op, auth);
  // A session's role was checked when it was identified (identifySessionCaller).
  if (!auth.key) return;
  if (auth.key.permission === 'full_access' || auth.key.permission === op.permission) return;
  throw new ServiceError(
    'restricted_api_key',
    `This API key is restricted to ${auth.key.permission === 'sending_access' ? 'sending emails' : "its store's event pushes"}.`,
  );
}
