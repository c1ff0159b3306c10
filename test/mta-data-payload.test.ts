// session.ts sends a message's DATA payload as one prepared buffer instead of through nodemailer's data stream:
// the bytes must be exactly those that stream produces (dot-stuffing, bare LF to CRLF, the final dot line). And
// compose.ts gives a composed message CRLF line ends before it is signed: the same payload, the same body hash.
import test from 'ava';
import DataStream from 'nodemailer/lib/smtp-connection/data-stream';
import { dkimBody } from 'mailauth/lib/dkim/body/index.js';
import { dataPayload } from '../shared/lib-internals/nodemailer-connection.ts';
import { crlfLines } from '../mta/delivery/compose.ts';

async function viaStream(message: Buffer): Promise<Buffer> {
  const stream = new (DataStream as unknown as new () => import('node:stream').Transform)();
  const out: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => stream.on('end', resolve));
  stream.end(message);
  await ended;
  return Buffer.concat(out);
}

/** Fixed cases and 3,000 random ones made of the pieces that matter: dots, line ends, spaces. */
function cases(): string[] {
  const all = ['', '.', 'a\r\n', '.a\r\n.b\r\n..c', 'a\nb\n.c\n', '\n.\n', 'x\r\n\n.\r\n', 'no end of line'];
  const pieces = ['a', '.', '\r\n', '\r\n.', '..', ' ', '\n', '\n.', '  \t'];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  for (let i = 0; i < 3000; i++)
    all.push(Array.from({ length: next() % 12 }, () => pieces[next() % pieces.length]).join(''));
  return all;
}

const relaxedBodyHash = (message: Buffer) => {
  const hasher = dkimBody('relaxed', 'sha256', false);
  hasher.update(message);
  return hasher.digest('base64');
};

test("the payload equals what nodemailer's data stream sends; a bare CR is left to that stream", async (t) => {
  for (const text of cases()) {
    const message = Buffer.from(text);
    t.deepEqual(dataPayload(message), await viaStream(message), JSON.stringify(text));
  }
  t.is(dataPayload(Buffer.from('a\rb\r\n')), null);
  t.is(dataPayload(Buffer.from('a\r\nb\r')), null);
});

test('crlfLines ends every line in CRLF, leaving the DATA payload and the relaxed body hash as they were', (t) => {
  for (const text of cases()) {
    const message = Buffer.from(text);
    const mended = crlfLines(message);
    t.is(mended.toString(), text.replace(/(?<!\r)\n/g, '\r\n'), JSON.stringify(text));
    t.deepEqual(dataPayload(mended), dataPayload(message), JSON.stringify(text));
    t.is(relaxedBodyHash(mended), relaxedBodyHash(message), JSON.stringify(text));
  }
  const whole = Buffer.from('a\r\nb\r\n');
  t.is(crlfLines(whole), whole, 'a message already in CRLF is returned as it is, not copied');
  t.is(crlfLines(Buffer.from('a\rb\n')).toString(), 'a\rb\r\n', 'a bare CR stays');
});
