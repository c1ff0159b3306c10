// Per-team rate limit in a one-second fixed window held in Redis, so every api copy shares it (CONTRACT).
import type { Context } from 'koa';
import { redisKey } from '../../shared/redis.ts';
import { ServiceError } from '../../shared/errors.ts';
import type { ApiDeps } from '../deps.ts';
import type { Auth } from '../routes/operation.ts';

export async function rateLimit(ctx: Context, deps: ApiDeps, auth: Auth): Promise<void> {
  const limit = auth.team.rate_limit_rps ?? deps.config.RATE_LIMIT_RPS;
  const now = Date.now();
  const second = Math.floor(now / 1000);
  const key = redisKey(deps.config, 'rl', auth.team.id, String(second));
  let count: number;
  try {
    const results = await deps.redis.multi().incr(key).expire(key, 2).exec();
    count = Number(results?.[0]?.[1] ?? 0);
  } catch (err) {
    // Fail open: a Redis outage must not stop the team's mail; /ready reports the outage.
    deps.log.warn({ err, requestId: ctx.state.requestId }, 'ratelimit.unavailable');
    return;
  }
  const reset = Math.max(1, Math.ceil(((second + 1) * 1000 - now) / 1000));
  ctx.set('ratelimit-limit', String(limit));
  ctx.set('ratelimit-remaining', String(Math.max(0, limit - count)));
  ctx.set('ratelimit-reset', String(reset));
  ctx.set('ratelimit-policy', `${limit};w=1`);
  if (count > limit) {
    ctx.set('retry-after', String(reset));
    throw new ServiceError('rate_limit_exceeded', `Too many requests. You can make ${limit} requests per second; retry after ${reset} second(s).`);
  }
}
