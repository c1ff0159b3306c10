// The HTTP translator of ServiceError: every error leaves in the spec's Error shape, and nothing of our
// internals (stack, SQL) ever reaches the client.
import type { Context, Next } from 'koa';
import { internalError, ServiceError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';

function fromForeign(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  const status =
    (err as { status?: number; statusCode?: number })?.status ?? (err as { statusCode?: number })?.statusCode;
  // Errors raised by Koa or Node for a malformed request (aborted upload, bad encoding) are the client's.
  if (typeof status === 'number' && status >= 400 && status < 500 && status !== 404 && status !== 405) {
    return new ServiceError('validation_error', 'The request could not be read.', {
      status: status === 413 ? 413 : 400,
    });
  }
  return internalError();
}

export function sendError(ctx: Context, err: unknown, log: Logger): void {
  const error = fromForeign(err);
  if (error.status >= 500 && !(err instanceof ServiceError)) {
    log.error({ err, requestId: ctx.state.requestId, method: ctx.method, path: ctx.path }, 'request.failed');
  }
  ctx.status = error.status;
  ctx.body = error.toBody();
  if (error.status === 405 && ctx.state.allow) ctx.set('Allow', ctx.state.allow);
}

export function errorHandler(log: Logger) {
  return async function errors(ctx: Context, next: Next) {
    try {
      await next();
    } catch (err) {
      sendError(ctx, err, log);
    }
  };
}
