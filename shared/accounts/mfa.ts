// TOTP (RFC 6238) with otplib: SHA-1, 6 digits, 30-second steps, as every authenticator app reads an otpauth URL.
// Clock window: a code of the current step, the one before or the one after is accepted (±30 s of drift), and a
// code whose step is not later than the last code accepted is refused, so a code works once. Secrets (20 random
// bytes, base32) are sealed with the secrets key at rest. Recovery codes: ten, shown once, stored as their SHA-256,
// each usable once; regenerating replaces them all.
import { randomInt } from 'node:crypto';
import type { Knex } from 'knex';
import { generateSecret, generateURI, verify } from 'otplib';
import { ServiceError } from '../errors.ts';
import { newId } from '../ids.ts';
import { open, seal } from '../secrets.ts';
import { iso } from '../time.ts';
import { hashSecret, newSecret } from './one-time.ts';
import type { UserRow } from './users.ts';

export const TOTP_PERIOD_SECONDS = 30;
/** Seconds either side of now whose code is accepted: one step. */
export const TOTP_TOLERANCE_SECONDS = 30;
export const RECOVERY_CODES = 10;
export const CHALLENGE_MINUTES = 5;
const ISSUER = 'Postwerk';

export function mfaEnabled(user: Pick<UserRow, 'mfa_enabled_at' | 'mfa_secret_sealed'>): boolean {
  return Boolean(user.mfa_enabled_at && user.mfa_secret_sealed);
}

/** Starts (or restarts) an enrolment: a new secret, pending until a code of it is confirmed. */
export async function enrol(db: Knex, secrets: Buffer, user: UserRow) {
  if (mfaEnabled(user))
    throw new ServiceError('validation_error', 'Two-factor authentication is already on: turn it off first.');
  const secret = generateSecret();
  await db('users')
    .where({ id: user.id })
    .update({ mfa_pending_secret_sealed: seal(secrets, secret), updated_at: new Date() });
  return {
    object: 'mfa_enrolment' as const,
    otpauth_url: generateURI({ issuer: ISSUER, label: user.email, secret }),
    secret,
  };
}

/** The TOTP step a code matches within the window, or null. */
async function matchingStep(secret: string, code: string, now: Date): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null;
  const result = await verify({
    secret,
    token: code,
    epoch: Math.floor(now.getTime() / 1000),
    epochTolerance: TOTP_TOLERANCE_SECONDS,
  }).catch(() => null);
  return result?.valid ? (result as { timeStep: number }).timeStep : null;
}

/**
 * True when `code` is a code of the sealed secret that is later than the last one accepted; it is then recorded as
 * the last one, in one conditional update, so two requests with the same code cannot both pass.
 */
async function acceptCode(db: Knex, user: UserRow, sealed: string, secrets: Buffer, code: string, now: Date) {
  const step = await matchingStep(open(secrets, sealed), code.replace(/\s+/g, ''), now);
  if (step === null) return false;
  const n = await db('users')
    .where({ id: user.id })
    .where((q) => q.whereNull('mfa_last_step').orWhere('mfa_last_step', '<', step))
    .update({ mfa_last_step: step });
  return n === 1;
}

export const badCode = (path = 'code') =>
  new ServiceError('validation_error', `Invalid \`${path}\`: the code is wrong, expired or already used.`, {
    errors: [{ path, message: 'wrong, expired or already used' }],
  });

/** A code of the user's active secret (a sign-in's second step, disabling, regenerating recovery codes). */
export function checkCode(db: Knex, secrets: Buffer, user: UserRow, code: string, now = new Date()) {
  if (!mfaEnabled(user)) return Promise.resolve(false);
  return acceptCode(db, user, user.mfa_secret_sealed!, secrets, code, now);
}

function newRecoveryCodes(): string[] {
  const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789';
  const part = () => Array.from({ length: 5 }, () => alphabet[randomInt(alphabet.length)]).join('');
  return Array.from({ length: RECOVERY_CODES }, () => `${part()}-${part()}`);
}

const normalizeRecovery = (code: string) => code.trim().toLowerCase().replace(/\s+/g, '');

/** Replaces the user's recovery codes; answers the new ones (the only time they are shown). */
export async function replaceRecoveryCodes(db: Knex, userId: string): Promise<string[]> {
  const codes = newRecoveryCodes();
  await db('mfa_recovery_codes').where({ user_id: userId }).delete();
  await db('mfa_recovery_codes').insert(
    codes.map((c) => ({ id: newId(), user_id: userId, code_hash: hashSecret(normalizeRecovery(c)) })),
  );
  return codes;
}

/** Uses one recovery code: true once, false for a wrong or spent code. */
export async function useRecoveryCode(db: Knex, userId: string, code: string, now = new Date()): Promise<boolean> {
  const n = await db('mfa_recovery_codes')
    .where({ user_id: userId, code_hash: hashSecret(normalizeRecovery(code)) })
    .whereNull('used_at')
    .update({ used_at: now });
  return n === 1;
}

/** Confirms the pending enrolment with a code of it: MFA is on, with fresh recovery codes. */
export async function confirm(db: Knex, secrets: Buffer, user: UserRow, code: string, now = new Date()) {
  if (mfaEnabled(user)) throw new ServiceError('validation_error', 'Two-factor authentication is already on.');
  if (!user.mfa_pending_secret_sealed)
    throw new ServiceError('validation_error', 'No enrolment to confirm: start one with POST /auth/mfa/enrol.');
  return db.transaction(async (trx) => {
    if (!(await acceptCode(trx, user, user.mfa_pending_secret_sealed!, secrets, code, now))) throw badCode();
    await trx('users').where({ id: user.id }).update({
      mfa_secret_sealed: user.mfa_pending_secret_sealed,
      mfa_pending_secret_sealed: null,
      mfa_enabled_at: now,
      updated_at: now,
    });
    const recovery_codes = await replaceRecoveryCodes(trx, user.id);
    return { object: 'mfa' as const, enabled: true as const, enabled_at: now.toISOString(), recovery_codes };
  });
}

export async function disable(db: Knex, userId: string, now = new Date()) {
  await db.transaction(async (trx) => {
    await trx('users').where({ id: userId }).update({
      mfa_secret_sealed: null,
      mfa_pending_secret_sealed: null,
      mfa_enabled_at: null,
      mfa_last_step: null,
      updated_at: now,
    });
    await trx('mfa_recovery_codes').where({ user_id: userId }).delete();
  });
  return { object: 'mfa' as const, enabled: false as const, enabled_at: null };
}

export async function status(db: Knex, user: UserRow) {
  const [{ n }] = await db('mfa_recovery_codes').where({ user_id: user.id }).whereNull('used_at').count({ n: '*' });
  const enabled = mfaEnabled(user);
  return {
    object: 'mfa' as const,
    enabled,
    enabled_at: enabled ? iso(user.mfa_enabled_at) : null,
    enrolling: !enabled && Boolean(user.mfa_pending_secret_sealed),
    recovery_codes_remaining: enabled ? Number(n) : 0,
    has_password: Boolean(user.password_hash),
  };
}

/** After a right password for a user with MFA on: the challenge its second step must name. */
export async function createChallenge(db: Knex, userId: string, now = new Date()) {
  const { token, hash } = newSecret('pwc_');
  const expires = new Date(now.getTime() + CHALLENGE_MINUTES * 60_000);
  await db('mfa_challenges').insert({ id: newId(), user_id: userId, token_hash: hash, expires_at: expires });
  return { object: 'mfa_challenge' as const, challenge_token: token, expires_at: expires.toISOString() };
}

/** The user of a live, unused challenge (not spent here: a wrong code may be retried within the throttle). */
export async function challengeUser(db: Knex, token: string, now = new Date()): Promise<UserRow | null> {
  const row = await db('mfa_challenges as c')
    .join('users as u', 'u.id', 'c.user_id')
    .where({ 'c.token_hash': hashSecret(token) })
    .whereNull('c.used_at')
    .where('c.expires_at', '>', now)
    .first('u.*');
  return (row as UserRow | undefined) ?? null;
}

/** Spends the challenge: true once. */
export async function spendChallenge(db: Knex, token: string, now = new Date()): Promise<boolean> {
  const n = await db('mfa_challenges')
    .where({ token_hash: hashSecret(token) })
    .whereNull('used_at')
    .update({ used_at: now });
  return n === 1;
}

export const badChallenge = () =>
  new ServiceError('validation_error', 'Invalid `challenge_token`: it is unknown, used or expired; sign in again.', {
    errors: [{ path: 'challenge_token', message: 'unknown, used or expired' }],
  });
