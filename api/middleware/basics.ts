import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import { ServiceError } from '../../shared/errors.ts';

/** A request id on every response and every log line; a client's own id is kept only if it is plain text. */
export async function requestId(ctx: Context, next: Next) {
  const given = ctx.get('x-request-id');
  ctx.state.requestId = /^[A-Za-z0-9._-]{1,128}$/.test(given) ? given : randomUUID();
  ctx.set('X-Request-Id', ctx.state.requestId);
  await next();
}

/** Every request needs a User-Agent (spec, Endpoints); the signed downloads too. */
const UNSUBSCRIBE_PATH = /^(\/api\/v1)?\/unsubscribe\//;

export async function requireUserAgent(ctx: Context, next: Next) {
  // An unsubscribe link must work for whatever posts to it (RFC 8058 one-click comes from the mailbox provider).
  if (!ctx.get('user-agent').trim() && !UNSUBSCRIBE_PATH.test(ctx.path)) {
    throw new ServiceError('validation_error', 'The `User-Agent` header is required.', { status: 400 });
  }
  await next();
}

export async function securityHeaders(ctx: Context, next: Next) {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Cache-Control', 'no-store');
  await next();
}
