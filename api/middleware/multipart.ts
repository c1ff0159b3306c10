// Reads a multipart/form-data body (busboy) without holding it: the one file part is handed to `store` as a stream
// as it arrives (backpressure reaches the client), text fields are collected. When anything is refused mid-body
// (the file past its limit, a field too long, a second file) the rest of the body is read and dropped, up to a
// bound, so that the client, still sending, can read the answer; past that bound the connection is closed.
import busboy from 'busboy';
import type { Readable } from 'node:stream';
import type { Context } from 'koa';
import { ServiceError } from '../../shared/errors.ts';

export interface MultipartOptions<T> {
  /** The name of the file part. */
  fileField: string;
  /** Largest text field, in bytes. */
  maxFieldBytes: number;
  /** Bytes read and dropped after a refusal before the connection is closed instead. */
  drainBytes: number;
  /** Consumes the file part (its own limits are its own: a rejection refuses the request). */
  store(file: Readable): Promise<T>;
}

export interface MultipartForm<T> {
  fields: Map<string, string>;
  /** What store() answered; undefined when the form had no file part. */
  file: T | undefined;
}

const refuse = (path: string, message: string) =>
  new ServiceError('validation_error', `Invalid \`${path}\`: ${message}.`, { errors: [{ path, message }] });

/** Reads and drops the rest of the request, up to `limit` bytes; past it, or on a stall, closes the connection. */
function drain(ctx: Context, limit: number): Promise<void> {
  const req = ctx.req;
  ctx.set('Connection', 'close');
  return new Promise((resolve) => {
    if (req.readableEnded || req.destroyed) return resolve();
    let seen = 0;
    const done = () => {
      clearTimeout(timer);
      req.off('data', onData);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > limit) done();
    };
    const timer = setTimeout(done, 30_000);
    req.on('data', onData);
    req.once('end', done);
    req.once('close', done);
    req.resume();
  });
}

export function readMultipart<T>(ctx: Context, options: MultipartOptions<T>): Promise<MultipartForm<T>> {
  if (!ctx.request.is('multipart/form-data'))
    throw new ServiceError(
      'validation_error',
      `The request body must be multipart/form-data, with the CSV as the \`${options.fileField}\` part.`,
      { status: 400 },
    );
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: ctx.req.headers,
      limits: { files: 1, fields: 20, parts: 30, fieldSize: options.maxFieldBytes },
    });
  } catch {
    throw new ServiceError('validation_error', 'The multipart/form-data body has no boundary.', { status: 400 });
  }
  return new Promise<MultipartForm<T>>((resolve, reject) => {
    const fields = new Map<string, string>();
    let stored: Promise<T> | undefined;
    let part: Readable | undefined;
    let failed = false;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      // A part still being stored ends with the refusal (store() then rejects and cleans up after itself).
      if (part && !part.readableEnded) part.destroy(err);
      ctx.req.unpipe(parser);
      parser.removeAllListeners();
      parser.on('error', () => {});
      // The stored part's own cleanup runs first (a refused file leaves nothing behind), then the rest is drained.
      void (stored ?? Promise.resolve())
        .catch(() => {})
        .then(() => drain(ctx, options.drainBytes))
        .then(() => reject(err));
    };
    parser.on('file', (name, stream) => {
      if (name !== options.fileField || stored) {
        stream.resume();
        return fail(refuse(name, `is a file part; only \`${options.fileField}\` takes one, once`));
      }
      part = stream;
      stored = options.store(stream);
      stored.catch((err) => {
        stream.resume();
        fail(err);
      });
    });
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) return fail(refuse(name, `is longer than ${options.maxFieldBytes} bytes`));
      if (fields.has(name)) return fail(refuse(name, 'is given twice'));
      fields.set(name, value);
    });
    parser.on('filesLimit', () => fail(refuse(options.fileField, 'is given twice: an import takes one file')));
    parser.on('fieldsLimit', () => fail(refuse('(body)', 'has too many fields')));
    parser.on('partsLimit', () => fail(refuse('(body)', 'has too many parts')));
    parser.on('error', () =>
      fail(new ServiceError('validation_error', 'The multipart/form-data body is malformed.', { status: 400 })),
    );
    parser.on('close', () => {
      if (failed) return;
      (stored ?? Promise.resolve(undefined)).then(
        (file) => !failed && resolve({ fields, file }),
        () => {}, // fail() has it
      );
    });
    ctx.req.once('close', () => {
      if (!ctx.req.complete) fail(new ServiceError('validation_error', 'The request was aborted.', { status: 400 }));
    });
    ctx.req.pipe(parser);
  });
}
