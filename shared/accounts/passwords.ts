// Passwords: Argon2id (RFC 9106) through the maintained native binding `argon2`. A password is NFKC-normalised
// first (NIST SP 800-63B §5.1.1.2), so the same characters typed on another keyboard or system are the same
// password. The parameters make one hash or check cost 71-90 ms of one core on the reference machine (2 cores; a
// sign-in 79-84 ms of the api's CPU, bench/README.md); argon2 runs on libuv's thread pool, off the event loop, at most
// MAX_CONCURRENT_HASHES at a time.
import argon2 from 'argon2';
import { ServiceError } from '../errors.ts';

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 4096;

/** 32 MiB, 3 passes, one lane: 71-90 ms here (OWASP's floor, 19 MiB x 2, measured 31-53 ms). */
export const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 32 * 1024, timeCost: 3, parallelism: 1 } as const;

/**
 * libuv's thread pool (UV_THREADPOOL_SIZE threads, 4 by default) also does the process's file system calls (the
 * blob store, the readiness probe) and zlib. A burst of sign-ins (a credential-stuffing run spread over many
 * addresses) would otherwise hold every thread for seconds: the pool's work is first come, first served, so an
 * attachment's read or `/ready`'s probe would wait behind every hash queued before it, and a load balancer would
 * take a healthy api out. At most this many hashes and checks hold a thread at once (two threads stay free); the
 * rest wait on the event loop.
 */
export const MAX_CONCURRENT_HASHES = Math.max(1, (Number(process.env.UV_THREADPOOL_SIZE) || 4) - 2);

let running = 0;
const waiting: (() => void)[] = [];

/** Runs `work` once fewer than MAX_CONCURRENT_HASHES are running; a finished one hands its turn to the next waiting. */
async function limited<T>(work: () => Promise<T>): Promise<T> {
  if (running < MAX_CONCURRENT_HASHES) running++;
  else await new Promise<void>((turn) => waiting.push(turn));
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

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
  return limited(() => argon2.hash(normalizePassword(password), ARGON2_OPTIONS));
}

let dummy: Promise<string> | undefined;

/**
 * Checks `password` against `hash`. With no hash (an unknown address, an account without a password) a dummy
 * hash of the same parameters is checked instead, so the answer takes as long either way.
 */
export async function verifyPassword(hash: string | null | undefined, password: string): Promise<boolean> {
  const normalized = normalizePassword(password);
  if (!hash) {
    dummy ??= limited(() => argon2.hash('postwerk-dummy-password', ARGON2_OPTIONS));
    const made = await dummy;
    await limited(() => argon2.verify(made, normalized)).catch(() => false);
    return false;
  }
  try {
    return await limited(() => argon2.verify(hash, normalized));
  } catch {
    return false;
  }
}
