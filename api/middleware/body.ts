// Reads a JSON body up to the operation's limit. An empty body is `{}` (the SDK posts none with a JSON type).
import type { Context } from 'koa';
import { payloadTooLarge, ServiceError } from '../../shared/errors.ts';

export async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
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
  // Decoded once: the emptiness check and the parse share the text.
  const text = raw.toString('utf8');
  if (text.trim() === '') return {};
  if (!ctx.request.is('application/json', '+json')) {
    throw new ServiceError('validation_error', 'The request body must be JSON, sent with `Content-Type: application/json`.', { status: 400 });
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ServiceError('validation_error', 'The request body is not valid JSON.', { status: 400 });
  }
}
