// Signing in: the password checked (a dummy hash checked for an unknown address: the same time either way), the
// per-account and per-client throttles, then a session or, with MFA on, a challenge for the second step.
import type { Knex } from 'knex';
import { normalizeEmail } from './addresses.ts';
import { verifyPassword } from './passwords.ts';
import { countClient, countFailure, lockedFor, type ThrottleDeps, type Verdict } from './throttle.ts';
import { findUserByEmail, type UserRow } from './users.ts';
import { createChallenge, mfaEnabled } from './mfa.ts';

export type LoginOutcome =
  | { kind: 'throttled'; retryAfter: number }
  | { kind: 'failed'; lockedNow: UserRow | null }
  | { kind: 'mfa'; challenge: Awaited<ReturnType<typeof createChallenge>> }
  | { kind: 'signed_in'; user: UserRow };

/** The client's attempt counted, then the account's lock read: the first verdict that refuses, or null. */
export async function throttleAttempt(deps: ThrottleDeps, ip: string, kind: string, subject: string): Promise<Verdict> {
  return (await countClient(deps, ip)) ?? (await lockedFor(deps, kind, subject));
}

export async function login(
  db: Knex,
  throttle: ThrottleDeps,
  input: { email: string; password: string; ip: string },
): Promise<LoginOutcome> {
  const email = normalizeEmail(input.email);
  const wait = await throttleAttempt(throttle, input.ip, 'login', email);
  if (wait !== null) return { kind: 'throttled', retryAfter: wait };
  const user = await findUserByEmail(db, email);
  const ok = await verifyPassword(user?.password_hash, input.password);
  if (!ok || !user) {
    const { locked } = await countFailure(throttle, 'login', email);
    return { kind: 'failed', lockedNow: locked && user ? user : null };
  }
  if (mfaEnabled(user)) return { kind: 'mfa', challenge: await createChallenge(db, user.id) };
  return { kind: 'signed_in', user };
}
