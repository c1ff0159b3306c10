// Passwords: Argon2id (RFC 9106) through the maintained native binding `argon2`. A password is NFKC-normalised
// first (NIST SP 800-63B §5.1.1.2), so the same characters typed on another keyboard or system are the same
// password. The parameters make one hash or check cost 71-90 ms of one core on the reference machine (2 cores; a
// sign-in 79-84 ms of the api's CPU, bench/README.md); argon2 runs on libuv's thread pool, off the event loop.
import argon2 from 'argon2';
import { ServiceError } from '../errors.ts';

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 4096;

/** 32 MiB, 3 passes, one lane: 71-90 ms here (OWASP's floor, 19 MiB x 2, measured 31-53 ms). */
export const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 32 * 1024, timeCost: 3, parallelism: 1 } as const;

export function normalizePassword(password: string): string {
  return password.normalize('NFKC');
}

/** The length rule, counted in characters (code points) of the normalised password. */
export function checkPasswordLength(password: string, path = 'password'): string {
  const normalized = normalizePassword(password);
  const length = [...normalized].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) {
    const message = `must be ${PASSWORD_MIN}-${PASSWORD_MAX} characters`;
    throw new ServiceError('validation_error', `Invalid \`${path}\`: ${message}.`, { errors: [{ path, message }] });
  }
  return normalized;
}

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(normalizePassword(password), ARGON2_OPTIONS);
}

let dummy: Promise<string> | undefined;

/**
 * Checks `password` against `hash`. With no hash (an unknown address, an account without a password) a dummy
 * hash of the same parameters is checked instead, so the answer takes as long either way.
 */
export async function verifyPassword(hash: string | null | undefined, password: string): Promise<boolean> {
  const normalized = normalizePassword(password);
  if (!hash) {
    dummy ??= argon2.hash('postwerk-dummy-password', ARGON2_OPTIONS);
    await argon2.verify(await dummy, normalized).catch(() => false);
    return false;
  }
  try {
    return await argon2.verify(hash, normalized);
  } catch {
    return false;
  }
}
