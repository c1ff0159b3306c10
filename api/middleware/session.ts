// Dashboard sessions on the HTTP surface: the cookies, who a cookie signs in, and the CSRF defence of every
// cookie-authenticated write. Cookie names: `postwerk_session` (the opaque token; httpOnly) and `postwerk_csrf`
// (readable by the page's script), `__Host-` prefixed when PUBLIC_BASE_URL is https (then also Secure). Both are
// SameSite=Lax. A write (any method but GET, HEAD, OPTIONS) made with the cookie must carry an Origin (or, without
// one, a Referer) of this site and the header `X-CSRF-Token` equal to the `postwerk_csrf` cookie, whose value is an
// HMAC of the session token under a key derived from the secrets key: a page of another site can make the browser
// send the cookie, but can neither read the CSRF cookie nor forge its value.
import { createHmac } from 'node:crypto';
import type { Context } from 'koa';
import { ServiceError } from '../../shared/errors.ts';
import { secretsKey } from '../../shared/secrets.ts';
import { safeEqual, sha256Hex } from '../../shared/tokens.ts';
import { findSession, type ActiveSession } from '../../shared/accounts/sessions.ts';
import type { ApiDeps } from '../deps.ts';

export const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
export const CSRF_HEADER = 'x-csrf-token';

const https = (deps: Pick<ApiDeps, 'config'>) => deps.config.PUBLIC_BASE_URL.startsWith('https:');

export function cookieNames(deps: Pick<ApiDeps, 'config'>) {
  const prefix = https(deps) ? '__Host-' : '';
  return { session: `${prefix}postwerk_session`, csrf: `${prefix}postwerk_csrf` };
}

const keys = new WeakMap<Buffer, Buffer>();
function csrfKey(deps: Pick<ApiDeps, 'config'>): Buffer {
  const root = secretsKey(deps.config);
  let key = keys.get(root);
  if (!key) keys.set(root, (key = createHmac('sha256', root).update('session-csrf').digest()));
  return key;
}

/** The CSRF token of a session token: the value of the CSRF cookie and of the header a write must carry. */
export function csrfTokenOf(deps: Pick<ApiDeps, 'config'>, sessionToken: string): string {
  return createHmac('sha256', csrfKey(deps)).update(sha256Hex(sessionToken)).digest('base64url');
}

function cookie(name: string, value: string, maxAgeSeconds: number, deps: Pick<ApiDeps, 'config'>, httpOnly: boolean) {
  return [
    `${name}=${value}`,
    'Path=/',
    `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`,
    'SameSite=Lax',
    ...(httpOnly ? ['HttpOnly'] : []),
    ...(https(deps) ? ['Secure'] : []),
  ].join('; ');
}

/** Sets both cookies for `token`, living until `expires` (the session's absolute expiry). */
export function setSessionCookies(ctx: Context, deps: Pick<ApiDeps, 'config'>, token: string, expires: Date): void {
  const names = cookieNames(deps);
  const age = (expires.getTime() - Date.now()) / 1000;
  ctx.append('Set-Cookie', cookie(names.session, token, age, deps, true));
  ctx.append('Set-Cookie', cookie(names.csrf, csrfTokenOf(deps, token), age, deps, false));
}

export function clearSessionCookies(ctx: Context, deps: Pick<ApiDeps, 'config'>): void {
  const names = cookieNames(deps);
  ctx.append('Set-Cookie', cookie(names.session, '', 0, deps, true));
  ctx.append('Set-Cookie', cookie(names.csrf, '', 0, deps, false));
}

export function sessionCookie(ctx: Context, deps: Pick<ApiDeps, 'config'>): string | undefined {
  return ctx.cookies.get(cookieNames(deps).session) || undefined;
}

const notSignedIn = () =>
  new ServiceError('missing_api_key', 'Not signed in (no session, or it has ended): sign in at POST /auth/login.');

/** The live session of the request's cookie, or 401. */
export async function identifySession(ctx: Context, deps: ApiDeps): Promise<ActiveSession & { token: string }> {
  const token = sessionCookie(ctx, deps);
  if (!token) throw notSignedIn();
  const active = await findSession(deps.db, token, deps.config);
  if (!active) throw notSignedIn();
  return { ...active, token };
}

/** This site's origins: PUBLIC_BASE_URL's, and the request's own (the Host it was sent to). */
function ownOrigins(ctx: Context, deps: ApiDeps): string[] {
  // Not ctx.origin: Koa 3 answers the Origin header there.
  return [new URL(deps.config.PUBLIC_BASE_URL).origin, `${ctx.protocol}://${ctx.host}`];
}

function originOf(value: string): string | null {
  try {
    return new URL(value).origin;
  } catch {
    return null;
  }
}

const crossSite = (why: string) =>
  new ServiceError('invalid_permission', `Refused as a cross-site request: ${why}.`, { status: 403 });

/**
 * Refuses a request a browser made for another site: an Origin (or Referer) not ours, or Sec-Fetch-Site
 * `cross-site`. `required`: the request must name its origin (cookie-authenticated writes).
 */
export function checkOrigin(ctx: Context, deps: ApiDeps, required: boolean): void {
  if (ctx.get('sec-fetch-site') === 'cross-site') throw crossSite('Sec-Fetch-Site is cross-site');
  const given = ctx.get('origin') || ctx.get('referer');
  if (!given) {
    if (required) throw crossSite('a write made with the session cookie must carry an Origin header');
    return;
  }
  const origin = originOf(given);
  if (!origin || !ownOrigins(ctx, deps).includes(origin)) throw crossSite(`the origin ${given} is not this site`);
}

/** The CSRF defence of a cookie-authenticated request (writes only). */
export function checkCsrf(ctx: Context, deps: ApiDeps, sessionToken: string): void {
  if (SAFE_METHODS.has(ctx.method)) return;
  checkOrigin(ctx, deps, true);
  const given = ctx.get(CSRF_HEADER);
  if (!given || !safeEqual(given, csrfTokenOf(deps, sessionToken)))
    throw new ServiceError(
      'invalid_permission',
      'Missing or wrong X-CSRF-Token header: send the value of the postwerk_csrf cookie with every write.',
      { status: 403 },
    );
}
