// A composed message's bytes without nodemailer's streams. MailComposer's build() writes its MIME tree through a
// PassThrough per part, stream pipelines (an AbortController and a DOMException each) and a setImmediate between
// parts: 0.8 ms of CPU for a 10 KB text message and 1.3 ms with an HTML part on the development VM (2026-12-02),
// against 0.13-0.21 ms for the tree itself. An API send holds everything in memory (strings, attachment Buffers),
// so this writes the same tree in one pass, in MimeNode.stream()'s order: nodemailer still builds every header
// (buildHeaders), chooses each part's transfer encoding (getTransferEncoding) and encodes each body with its own
// quoted-printable or base64 encoder, whose transform steps run in place on the whole body, as the stream gives it
// to them (one chunk). 0.30 and 0.88 ms for the same two messages. A tree holding anything else (a stream, a file or
// URL to read, raw content, a transform or a newline conversion) is left to build().
//
// Library: nodemailer 10.6.0, dist/cjs/mime-node/index.js (MimeNode.stream(), createReadStream(), build()),
// qp/index.js and base64/index.js (their Encoder streams). Internals used: a MimeNode's `_raw`, `_transforms`,
// `_processFuncs`, `multipart`, `boundary` and `contentType` (the last three set by buildHeaders()); an Encoder's
// `_transform` and `_flush`, with its `push` replaced to collect the output. Guarded by test/lib-internals.test.ts
// (the members exist) and test/mime-build.test.ts (build()'s bytes, byte for byte, over generated messages).
import type MimeNode from 'nodemailer/lib/mime-node';
import * as base64 from 'nodemailer/lib/base64';
import * as qp from 'nodemailer/lib/qp';

/** The parts of a MimeNode that build() reads and its type leaves out. */
interface NodeInternals {
  _raw?: unknown;
  _transforms: unknown[];
  _processFuncs: unknown[];
}

const internals = (node: MimeNode) => node as unknown as NodeInternals;

/** Content this module encodes itself: text or bytes, in memory. */
const inMemory = (content: unknown): content is string | Buffer =>
  typeof content === 'string' || Buffer.isBuffer(content);

/** Can `node` and every node below it be written by writeNode? */
function writable(node: MimeNode, root: boolean): boolean {
  const n = internals(node);
  if (n._raw) return false;
  if (root && (n._transforms.length > 0 || n._processFuncs.length > 0 || node.newline)) return false;
  if (node.content && !inMemory(node.content)) return false;
  return node.childNodes.every((child) => writable(child, false));
}

/** The transform half of a nodemailer encoder stream: synchronous, its output given to push(). */
interface EncoderSteps {
  _transform(chunk: Buffer, encoding: string, done: (err?: Error | null) => void): void;
  _flush(done: (err?: Error | null) => void): void;
  push(chunk: unknown, encoding?: BufferEncoding): boolean;
}

/** What `encoder` writes for `input` given as one chunk, as the stream would: its own steps, run in place. */
function runEncoder(encoder: object, input: Buffer): Buffer {
  const steps = encoder as EncoderSteps;
  const parts: Buffer[] = [];
  steps.push = (chunk, encoding) => {
    if (chunk !== null)
      parts.push(typeof chunk === 'string' ? Buffer.from(chunk, encoding ?? 'utf8') : (chunk as Buffer));
    return true;
  };
  const done = (err?: Error | null) => {
    if (err) throw err;
  };
  steps._transform(input, 'buffer', done);
  steps._flush(done);
  return Buffer.concat(parts);
}

/** The body of `node` as MimeNode.stream() writes it (a string reaches its encoder as UTF-8, one chunk). */
function encoded(node: MimeNode, encoding: string | false, content: string | Buffer): string | Buffer {
  const bytes = () => (typeof content === 'string' ? Buffer.from(content) : content);
  if (encoding === 'base64') return runEncoder(new base64.Encoder({}), bytes());
  if (encoding === 'quoted-printable')
    return runEncoder(new qp.Encoder({ binary: !/^text\//i.test(node.contentType ?? '') }), bytes());
  return content;
}

/** MimeNode.stream() for an in-memory node: headers, the blank line, the encoded content, then the children. */
function writeNode(node: MimeNode, out: (string | Buffer)[]): void {
  const encoding = node.getTransferEncoding();
  out.push(node.buildHeaders() + '\r\n\r\n');
  if (node.content) out.push(encoded(node, encoding, node.content as string | Buffer));
  if (!node.multipart) return;
  node.childNodes.forEach((child, i) => {
    out.push((i > 0 ? '\r\n' : '') + '--' + String(node.boundary) + '\r\n');
    writeNode(child, out);
  });
  out.push('\r\n--' + String(node.boundary) + '--\r\n');
}

/** The bytes `root.build()` would give, written in one pass when the tree allows it (see the top of this file). */
export async function buildMessage(root: MimeNode): Promise<Buffer> {
  if (!writable(root, true)) return root.build();
  const out: (string | Buffer)[] = [];
  writeNode(root, out);
  const message = Buffer.concat(out.map((part) => (typeof part === 'string' ? Buffer.from(part) : part)));
  // build() ends the message with a line break when its last byte is not one (LastNewline).
  const last = message[message.length - 1];
  if (last === 0x0a) return message;
  return Buffer.concat([message, Buffer.from(last === 0x0d ? '\n' : '\r\n')]);
}
