// Per-team rate limit in a one-second fixed window held in Redis, so every api copy shares it (CONTRACT); the
// window is shared/rate-limit.ts's, which SMTP submission counts in too. A request well under its team's limit
// (shared/rate-limit-view.ts) runs while Redis counts it, so a slow moment of Redis is not in its answer's time;
// one nearer the limit waits for the exact count first.
import type { Context } from 'koa';
import { countIn, limitOf, rateLimitError, windowOf, type RateWindow } from '../../shared/rate-limit.ts';
import { track, underHalf, viewOf } from '../../shared/rate-limit-view.ts';
import type { ApiDeps } from '../deps.ts';
import type { Auth } from '../routes/operation.ts';

/**
 * Counts the request in its team's window. Throws rate_limit_exceeded when it is over the limit. Answers what sets
 * the ratelimit headers, to call before the answer leaves: from Redis's count when it has come, else from the least
 * count this copy knows. A Redis outage lets the request through without the headers (fail open: a Redis outage
 * must not stop the team's mail; /ready reports it).
 */
export async function rateLimit(ctx: Context, deps: ApiDeps, auth: Auth): Promise<() => void> {
  const now = Date.now();
  const view = viewOf(deps.redis, auth.team.id, Math.floor(now / 1000));
  const { least, runAtOnce } = underHalf(view, limitOf(deps.config, auth.team));
  const counted = track(view, countIn(deps.redis, deps.config, auth.team.id, now));
  const unavailable = (err: unknown) => deps.log.warn({ err, requestId: ctx.state.requestId }, 'ratelimit.unavailable');
  if (runAtOnce) {
    let count: number | null = least;
    counted.then(
      (n) => (count = n),
      (err: unknown) => {
        count = null;
        unavailable(err);
      },
    );
    return () => {
      if (count !== null) setHeaders(ctx, windowOf(deps.config, auth.team, count, now));
    };
  }
  let window: RateWindow;
  try {
    window = windowOf(deps.config, auth.team, await counted, now);
  } catch (err) {
    unavailable(err);
    return () => {};
  }
  setHeaders(ctx, window);
  if (window.exceeded) {
    ctx.set('retry-after', String(window.reset));
    throw rateLimitError(window);
  }
  return () => setHeaders(ctx, window);
}

function setHeaders(ctx: Context, window: RateWindow): void {
  ctx.set('ratelimit-limit', String(window.limit));
  ctx.set('ratelimit-remaining', String(window.remaining));
  ctx.set('ratelimit-reset', String(window.reset));
  ctx.set('ratelimit-policy', `${window.limit};w=1`);
}
