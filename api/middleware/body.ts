// Reads a JSON body up to the operation's limit. An empty body is `{}` (the SDK posts none with a JSON type).
// readFormBody reads an HTML form's (the unsubscribe page's).
import type { Context } from 'koa';
import { payloadTooLarge, ServiceError } from '../../shared/errors.ts';

/** The body's bytes, up to `limit` (413 past it). */
export async function readRawBody(ctx: Context, limit: number): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) throw payloadTooLarge(limit);
  // Listeners, not `for await`: leaving a for-await loop early destroys the request and with it the socket,
  // so a client still sending a chunked body would see a reset instead of the 413. Past the limit the rest is
  // left to drain unread and the connection closes once the answer is out.
  const raw = await new Promise<Buffer>((resolve, reject) => {
    const req = ctx.req;
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      stop();
      ctx.set('Connection', 'close');
      reject(payloadTooLarge(limit));
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks));
    };
    // A stream error is the client's (it went away mid-body): a 400 nobody reads, but the request ends.
    const onError = (err: Error) => {
      stop();
      reject(Object.assign(err, { status: 400 }));
    };
    const onClose = () => onError(new Error('request aborted'));
    if (req.destroyed) return onClose(); // gone before we started reading
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
  ctx.state.rawBody = raw;
  return raw;
}

/** An `application/x-www-form-urlencoded` body (what a form posts); any other type reads as no fields. */
export async function readFormBody(ctx: Context, limit: number): Promise<URLSearchParams> {
  const raw = await readRawBody(ctx, limit);
  return ctx.request.is('application/x-www-form-urlencoded')
    ? new URLSearchParams(raw.toString('utf8'))
    : new URLSearchParams();
}

export async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  const raw = await readRawBody(ctx, limit);
  // Decoded once: the emptiness check and the parse share the text.
  const text = raw.toString('utf8');
  if (text.trim() === '') return {};
  if (!ctx.request.is('application/json', '+json')) {
    throw new ServiceError(
      'validation_error',
      'The request body must be JSON, sent with `Content-Type: application/json`.',
      { status: 400 },
    );
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ServiceError('validation_error', 'The request body is not valid JSON.', { status: 400 });
  }
}
