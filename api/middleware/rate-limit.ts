// Per-team rate limit in a one-second fixed window held in Redis, so every api copy shares it (CONTRACT); the
// window is shared/rate-limit.ts's, which SMTP submission counts in too.
import type { Context } from 'koa';
import { countRequest, rateLimitError, type RateWindow } from '../../shared/rate-limit.ts';
import type { ApiDeps } from '../deps.ts';
import type { Auth } from '../routes/operation.ts';

export async function rateLimit(ctx: Context, deps: ApiDeps, auth: Auth): Promise<void> {
  let window: RateWindow;
  try {
    window = await countRequest(deps.redis, deps.config, auth.team);
  } catch (err) {
    // Fail open: a Redis outage must not stop the team's mail; /ready reports the outage.
    deps.log.warn({ err, requestId: ctx.state.requestId }, 'ratelimit.unavailable');
    return;
  }
  ctx.set('ratelimit-limit', String(window.limit));
  ctx.set('ratelimit-remaining', String(window.remaining));
  ctx.set('ratelimit-reset', String(window.reset));
  ctx.set('ratelimit-policy', `${window.limit};w=1`);
  if (window.exceeded) {
    ctx.set('retry-after', String(window.reset));
    throw rateLimitError(window);
  }
}
