// The mta writes a composed message's MIME tree in one pass (shared/lib-internals/nodemailer-mime-build.ts) instead
// of nodemailer's streaming build(): the bytes must be build()'s, byte for byte, for every shape an API send can
// take, since a recomposition after a crash must send what the first attempt sent, and the message's DKIM body hash
// with it.
import test from 'ava';
import { Readable } from 'node:stream';
import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';
import { buildMessage } from '../shared/lib-internals/nodemailer-mime-build.ts';

/** A seeded generator: the same messages on every run, so a failure names a case that can be run again. */
function random(seed: number) {
  let s = seed;
  const next = () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
  const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)];
  return { next, pick };
}

// Text that exercises the encoders' edges: line breaks of every kind, trailing whitespace before a break and at the
// end, long lines, '=' and '.', multi-byte UTF-8 on a soft break, NUL and other control bytes.
const PIECES = [
  'hello',
  ' ',
  '  ',
  '\t',
  '\n',
  '\r\n',
  '\r',
  'café',
  '😀',
  '=',
  '.',
  'x'.repeat(80),
  'y'.repeat(200),
  '<a href="https://example.com/?a=1&b=2">',
  '\u00a0',
  'долгий текст',
  '中文',
  ' \n',
  '\t\r\n',
  '\u0000\u0007',
  'The quick brown fox jumps over the lazy dog and the benchmark keeps typing.\n',
];

function message(i: number): Mail.Options {
  const { next, pick } = random(i + 1);
  const text = (n: number) => Array.from({ length: n }, () => pick(PIECES)).join('');
  const options: Mail.Options = {
    from: pick(['a@example.com', '"Jö Doe" <jo@example.com>']),
    to: ['b@example.org', 'Zoë <z@example.net>'].slice(0, 1 + Math.floor(next() * 2)),
    subject: text(3),
    messageId: `<${i}@example.com>`,
    date: new Date(1_700_000_000_000 + i * 1000),
    baseBoundary: 'abcdef0123456789',
    headers: next() < 0.3 ? { 'X-Tag': text(2) } : {},
  };
  const body = next();
  if (body < 0.8) options.text = text(Math.floor(next() * 400));
  if (body > 0.3) options.html = text(Math.floor(next() * 400));
  const attachments: Mail.Attachment[] = [];
  if (next() < 0.3)
    attachments.push({
      content: Buffer.from(Array.from({ length: Math.floor(next() * 5000) }, () => Math.floor(next() * 256))),
      contentType: pick(['application/pdf', 'image/png', 'text/plain', 'text/csv']),
      filename: pick(['a.pdf', 'ü.png', false as const]),
      contentDisposition: pick(['attachment', 'inline'] as const),
      ...(next() < 0.5 ? { cid: 'logo@example.com' } : {}),
    });
  // Quoted-printable chosen for an attachment: outside text/* its encoder also encodes lone CR and LF.
  if (next() < 0.1)
    attachments.push({
      content: Buffer.from(text(30)),
      contentType: 'application/octet-stream',
      contentTransferEncoding: 'quoted-printable',
    });
  if (next() < 0.1) attachments.push({ content: Buffer.from(text(300)), contentType: 'text/plain', filename: 't.txt' });
  if (attachments.length) options.attachments = attachments;
  return options;
}

test('the one-pass build gives build()’s bytes for 600 generated messages', async (t) => {
  let compared = 0;
  for (let i = 0; i < 600; i++) {
    const options = message(i);
    const streamed = await new MailComposer(options).compile().build();
    const written = await buildMessage(new MailComposer(options).compile());
    if (!written.equals(streamed)) t.fail(`message ${i}: ${JSON.stringify(written.toString().slice(0, 400))}`);
    compared++;
  }
  t.is(compared, 600);
});

test('a 10 KB text body, an HTML body and a base64 attachment, as the bench and the tests send them', async (t) => {
  const line = 'The quick brown fox jumps over the lazy dog and the benchmark keeps typing.\n';
  const options: Mail.Options = {
    from: 'Sender <s@example.com>',
    to: 'r@example.org',
    subject: 'Bench 1',
    text: line.repeat(140),
    html: `<p>${'Grüße aus Köln, '.repeat(400)}</p>`,
    attachments: [{ content: Buffer.alloc(70_000, 7), filename: 'data.bin', contentType: 'application/octet-stream' }],
    messageId: '<fixed@example.com>',
    date: new Date('2026-12-02T06:00:00Z'),
    baseBoundary: '0123456789abcdef',
  };
  const streamed = await new MailComposer(options).compile().build();
  const written = await buildMessage(new MailComposer(options).compile());
  t.true(written.equals(streamed));
  const text = written.toString();
  t.regex(text, /Content-Transfer-Encoding: 7bit\r\n\r\nThe quick brown fox/);
  t.regex(text, /Content-Transfer-Encoding: quoted-printable\r\n\r\n<p>Gr=C3=BC=C3=9Fe/);
  t.regex(text, /Content-Transfer-Encoding: base64\r\n/);
  t.true(text.endsWith('--\r\n'));
});

test('a tree with content it does not hold in memory (a stream) is built by build() itself', async (t) => {
  const options = (): Mail.Options => ({
    from: 's@example.com',
    to: 'r@example.org',
    subject: 'streamed',
    text: Readable.from([Buffer.from('first part, '), Buffer.from('second part\n')]),
    messageId: '<stream@example.com>',
    date: new Date('2026-12-02T06:00:00Z'),
  });
  const streamed = await new MailComposer(options()).compile().build();
  const written = await buildMessage(new MailComposer(options()).compile());
  t.true(written.equals(streamed));
  t.regex(written.toString(), /first part, second part/);
});
