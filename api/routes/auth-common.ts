// What the auth and teams routes share: starting a session (cookies set), the answers' shapes, the 429 of a
// throttle, and the account mailer.
import type { Context } from 'koa';
import { ServiceError } from '../../shared/errors.ts';
import { createSession, findSession, type ActiveSession } from '../../shared/accounts/sessions.ts';
import { presentUser, type UserRow } from '../../shared/accounts/users.ts';
import { presentDashboardTeam } from '../../shared/teams/members.ts';
import { accountMailer, type AccountMailer } from '../../shared/accounts/mail.ts';
import type { ThrottleDeps } from '../../shared/accounts/throttle.ts';
import type { ApiDeps } from '../deps.ts';
import { sessionCookie, setSessionCookies } from '../middleware/session.ts';

export function presentSession(active: Pick<ActiveSession, 'user' | 'team'>) {
  return {
    object: 'session' as const,
    user: presentUser(active.user),
    current_team: active.team ? presentDashboardTeam(active.team) : null,
  };
}

/**
 * A new session for `user` (sign-in), its cookies set. A session the request's cookie still names is revoked
 * first: a sign-in always starts from a fresh token (no session fixation).
 */
export async function startSession(ctx: Context, deps: ApiDeps, user: UserRow) {
  const previous = sessionCookie(ctx, deps);
  if (previous) {
    const old = await findSession(deps.db, previous, deps.config);
    if (old) await deps.db('sessions').where({ id: old.session.id }).update({ revoked_at: new Date() });
  }
  const { token, session } = await createSession(deps.db, user, deps.config, {
    ip: ctx.ip,
    userAgent: ctx.get('user-agent'),
  });
  setSessionCookies(ctx, deps, token, session.expires_at);
  const active = await findSession(deps.db, token, deps.config);
  return presentSession(active ?? { user, team: null });
}

/** 429 with retry-after. */
export function throttled(ctx: Context, seconds: number): never {
  ctx.set('retry-after', String(seconds));
  throw new ServiceError(
    'rate_limit_exceeded',
    `Too many attempts. Try again in ${Math.ceil(seconds / 60)} minute(s) (retry-after ${seconds} s).`,
  );
}

export function throttleDeps(deps: ApiDeps): ThrottleDeps {
  return { redis: deps.redis, config: deps.config, log: deps.log };
}

export function mailer(deps: ApiDeps): AccountMailer {
  deps.accountMail ??= accountMailer(deps);
  return deps.accountMail;
}
