// session.ts sends a message's DATA payload as one prepared buffer instead of through nodemailer's data stream:
// the bytes must be exactly those that stream produces (dot-stuffing, bare LF to CRLF, the final dot line).
import test from 'ava';
import DataStream from 'nodemailer/lib/smtp-connection/data-stream';
import { dataPayload } from '../shared/lib-internals/nodemailer-connection.ts';

async function viaStream(message: Buffer): Promise<Buffer> {
  const stream = new (DataStream as unknown as new () => import('node:stream').Transform)();
  const out: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => stream.on('end', resolve));
  stream.end(message);
  await ended;
  return Buffer.concat(out);
}

test("the payload equals what nodemailer's data stream sends; a bare CR is left to that stream", async (t) => {
  const cases = ['', '.', 'a\r\n', '.a\r\n.b\r\n..c', 'a\nb\n.c\n', '\n.\n', 'x\r\n\n.\r\n', 'no end of line'];
  const pieces = ['a', '.', '\r\n', '\r\n.', '..', ' ', '\n', '\n.'];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  for (let i = 0; i < 3000; i++)
    cases.push(Array.from({ length: next() % 12 }, () => pieces[next() % pieces.length]).join(''));
  for (const text of cases) {
    const message = Buffer.from(text);
    t.deepEqual(dataPayload(message), await viaStream(message), JSON.stringify(text));
  }
  t.is(dataPayload(Buffer.from('a\rb\r\n')), null);
  t.is(dataPayload(Buffer.from('a\r\nb\r')), null);
});
