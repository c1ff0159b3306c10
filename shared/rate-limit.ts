// The per-team rate limit (CONTRACT "Rate limit"): a one-second fixed window counted in Redis, so every api copy
// and every mta copy share it. One window for the API and SMTP submission alike: a team's requests per second
// are the same budget whichever door they come through (resend-api.md §5: "same rate limit as API").
import type { Config } from './config.ts';
import { ServiceError } from './errors.ts';
import { redisKey, type Redis } from './redis.ts';

export interface RateWindow {
  limit: number;
  /** Requests counted in this window, this one included. */
  count: number;
  remaining: number;
  /** Seconds until the window ends (at least 1). */
  reset: number;
  exceeded: boolean;
}

/**
 * INCR, and the window's expiry set by its first request: one command (the script is cached by Redis) where
 * MULTI/INCR/EXPIRE/EXEC were four. The key outlives its second by a second at most.
 */
const COUNT_SCRIPT =
  "local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('EXPIRE', KEYS[1], 2) end return n";

/** Counts one request of `team` in the current window. Throws when Redis does not answer (callers fail open). */
export async function countRequest(
  redis: Redis,
  config: Pick<Config, 'REDIS_PREFIX' | 'RATE_LIMIT_RPS'>,
  team: { id: string; rate_limit_rps?: number | null },
  now = Date.now(),
): Promise<RateWindow> {
  return windowOf(config, team, await countIn(redis, config, team.id, now), now);
}

/** Counts one request of team `teamId` in the window of `now`; answers the window's count, this one included. */
export async function countIn(
  redis: Redis,
  config: Pick<Config, 'REDIS_PREFIX'>,
  teamId: string,
  now: number,
): Promise<number> {
  const key = redisKey(config, 'rl', teamId, String(Math.floor(now / 1000)));
  return Number(await redis.eval(COUNT_SCRIPT, 1, key));
}

/** The window of `now` holding `count` requests, judged by the team's limit. */
export function windowOf(
  config: Pick<Config, 'RATE_LIMIT_RPS'>,
  team: { rate_limit_rps?: number | null },
  count: number,
  now: number,
): RateWindow {
  const limit = team.rate_limit_rps ?? config.RATE_LIMIT_RPS;
  const second = Math.floor(now / 1000);
  const reset = Math.max(1, Math.ceil(((second + 1) * 1000 - now) / 1000));
  return { limit, count, remaining: Math.max(0, limit - count), reset, exceeded: count > limit };
}

export function rateLimitError(window: RateWindow): ServiceError {
  return new ServiceError(
    'rate_limit_exceeded',
    `Too many requests. You can make ${window.limit} requests per second; retry after ${window.reset} second(s).`,
  );
}
