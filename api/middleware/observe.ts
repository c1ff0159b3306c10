// Per answered request: the HTTP metrics and one `request` log line (method, declared route, status, time, team,
// request id). Placed outside the error translator, so it sees the status the client gets. The route is the
// operation's declared path, set by the router (api/router.ts); a path no operation serves is `unmatched`.
// (Request logs for GET /logs are another thing: rows in the database, written by the router for keyed requests.)
import type { Context, Next } from 'koa';
import type { Logger } from '../../shared/logger.ts';
import type { ApiMetrics } from '../../shared/metrics/api.ts';

export function observeRequests(log: Logger, metrics: ApiMetrics) {
  return async function observe(ctx: Context, next: Next) {
    const started = performance.now();
    try {
      await next();
    } finally {
      const seconds = (performance.now() - started) / 1000;
      const route: string = ctx.state.route ?? 'unmatched';
      metrics.httpRequests.inc({ method: ctx.method, route, status: String(ctx.status) });
      metrics.httpDuration.observe({ method: ctx.method, route }, seconds);
      log.info(
        {
          requestId: ctx.state.requestId,
          method: ctx.method,
          route,
          status: ctx.status,
          ms: Math.round(seconds * 10_000) / 10,
          teamId: ctx.state.auth?.team.id ?? null,
        },
        'request',
      );
    }
  };
}
