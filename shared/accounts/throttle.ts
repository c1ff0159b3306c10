// Brute-force throttles in Redis (fixed 15-minute windows, shared by every api copy): failed sign-ins and MFA codes
// per account, attempts per client address, account mails per address. Keys hold hashes, never an address.
// Redis unreachable: the throttle lets the attempt through and logs it (as the API rate limit does), so an outage
// of Redis does not lock everyone out.
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { redisKey, type Redis } from '../redis.ts';
import { sha256Hex } from '../tokens.ts';

export const WINDOW_SECONDS = 15 * 60;
/** Mails (sign-up, reset) one address may be sent in an hour. */
export const MAILS_PER_HOUR = 5;

export interface ThrottleDeps {
  redis: Redis;
  config: Pick<Config, 'REDIS_PREFIX' | 'AUTH_ACCOUNT_FAILURES' | 'AUTH_CLIENT_ATTEMPTS'>;
  log: Logger;
}

/** Seconds until the request may be tried again; null: go ahead. */
export type Verdict = number | null;

const COUNT_SCRIPT =
  "local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end return n";

/** The client's address as throttled: an IPv6 address by its /64 (one host gets a whole /64), IPv4 whole. */
export function clientOf(ip: string): string {
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(ip);
  if (v4) return v4[1];
  if (!ip.includes(':')) return ip;
  const [head] = ip.split('::');
  const groups = head.split(':').filter(Boolean);
  return `${groups.slice(0, 4).join(':')}::/64`;
}

function windowOf(seconds: number, now: number) {
  const index = Math.floor(now / 1000 / seconds);
  return { index, left: Math.max(1, (index + 1) * seconds - Math.floor(now / 1000)) };
}

const key = (deps: ThrottleDeps, kind: string, subject: string, index: number) =>
  redisKey(deps.config, 'auth', kind, sha256Hex(subject).slice(0, 32), String(index));

async function safely<T>(deps: ThrottleDeps, fallback: T, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    deps.log.warn({ err: (err as Error).message }, 'auth_throttle.unavailable');
    return fallback;
  }
}

/** Counts one attempt of the client; a verdict once it is past AUTH_CLIENT_ATTEMPTS in the window. */
export function countClient(deps: ThrottleDeps, ip: string, now = Date.now()): Promise<Verdict> {
  const w = windowOf(WINDOW_SECONDS, now);
  return safely(deps, null, async () => {
    const n = Number(
      await deps.redis.eval(COUNT_SCRIPT, 1, key(deps, 'client', clientOf(ip), w.index), WINDOW_SECONDS),
    );
    return n > deps.config.AUTH_CLIENT_ATTEMPTS ? w.left : null;
  });
}

/** `kind` (`login`, `mfa`) of `subject` (an address, a user id): locked while its failures reached the limit. */
export function lockedFor(deps: ThrottleDeps, kind: string, subject: string, now = Date.now()): Promise<Verdict> {
  const w = windowOf(WINDOW_SECONDS, now);
  return safely(deps, null, async () => {
    const n = Number((await deps.redis.get(key(deps, kind, subject, w.index))) ?? 0);
    return n >= deps.config.AUTH_ACCOUNT_FAILURES ? w.left : null;
  });
}

/** Counts a failure; `locked` is true for the one failure that reached the limit (the owner is told once). */
export function countFailure(
  deps: ThrottleDeps,
  kind: string,
  subject: string,
  now = Date.now(),
): Promise<{ locked: boolean }> {
  const w = windowOf(WINDOW_SECONDS, now);
  return safely(deps, { locked: false }, async () => {
    const n = Number(await deps.redis.eval(COUNT_SCRIPT, 1, key(deps, kind, subject, w.index), WINDOW_SECONDS));
    return { locked: n === deps.config.AUTH_ACCOUNT_FAILURES };
  });
}

/**
 * Counts one sign-up or reset request for `address` (known or not: the same for both); a verdict past
 * MAILS_PER_HOUR in the hour.
 */
export function countMail(deps: ThrottleDeps, address: string, now = Date.now()): Promise<Verdict> {
  const w = windowOf(3600, now);
  return safely(deps, null, async () => {
    const n = Number(await deps.redis.eval(COUNT_SCRIPT, 1, key(deps, 'mail', address, w.index), 3600));
    return n > MAILS_PER_HOUR ? w.left : null;
  });
}
