// Reads a JSON body up to the operation's limit. An empty body is `{}` (the SDK posts none with a JSON type).
import type { Context } from 'koa';
import { payloadTooLarge, ServiceError } from '../../shared/errors.ts';

export async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) throw payloadTooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw payloadTooLarge(limit);
    chunks.push(chunk);
  }
  const raw = Buffer.concat(chunks);
  ctx.state.rawBody = raw;
  if (raw.length === 0 || raw.toString('utf8').trim() === '') return {};
  if (!ctx.request.is('application/json', '+json')) {
    throw new ServiceError('validation_error', 'The request body must be JSON, sent with `Content-Type: application/json`.', { status: 400 });
  }
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new ServiceError('validation_error', 'The request body is not valid JSON.', { status: 400 });
  }
}
