// The 40 MB message limit (resend-api.md §2: ≤40 MB per email after base64), through both doors, with nothing
// stored on a refusal: REST answers 413 for a body over the send route's limit (read no further) and 422 for a
// message over 40 MB inside it; SMTP submission refuses a SIZE over its limit at MAIL FROM (552), a message
// past SIZE after DATA (552 5.3.4), and one within SIZE whose content is over 40 MB with the same 552 5.3.4.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { isError } from './helpers/http.ts';
import { rawSmtp, type RawSmtp } from './helpers/smtp-client.ts';
import { startSubmission, type Submission } from './helpers/submission.ts';
import { MAX_SUBMISSION_BYTES } from '../mta/submission/server.ts';
import { MAX_MESSAGE_BYTES } from '../shared/emails/content.ts';

let p: Platform;
let server: Submission;
let port: number;
let team: TestTeam;
let from: string;
let to: string;

test.before(async () => {
  p = await startPlatform();
  server = await startSubmission(p.deps, { implicitTls: true });
  port = server.port;
  team = await p.createTeam();
  const domains = (await p.request('GET', '/domains', { key: team.key })).body.data;
  from = `files@${domains.find((d: { managed: boolean }) => d.managed).name}`;
  to = `delivered@${p.config.SIMULATOR_DOMAIN}`;
});
test.after.always(async () => {
  await server?.close();
  await p?.close();
});

const stored = async (subject: string) =>
  Number((await p.db('emails').where({ team_id: team.id, subject }).count({ n: '*' }))[0].n);

/** Base64 of `bytes` random bytes (random, so no layer can shrink it). */
const base64Of = (bytes: number) => randomBytes(bytes).toString('base64');

test("REST: a body over the send route's limit is 413 validation_error; nothing stored", async (t) => {
  const res = await p.request('POST', '/emails', {
    key: team.key,
    body: {
      from,
      to,
      subject: 'rest 413',
      text: 'x',
      attachments: [{ filename: 'big.bin', content: 'A'.repeat(57 * 1024 * 1024) }],
    },
  });
  isError(t, res, 413, 'validation_error');
  t.regex(res.body.message, /larger than \d+ bytes/);
  t.is(await stored('rest 413'), 0);
});

test('REST: a message over 40 MB inside the body limit is 422 validation_error at `attachments`; just under is accepted', async (t) => {
  // 30.5 MB of file is 40.7 MB as base64: over; 29.9 MB is 39.9 MB: under.
  const over = await p.request('POST', '/emails', {
    key: team.key,
    body: {
      from,
      to,
      subject: 'rest 422',
      text: 'x',
      attachments: [{ filename: 'big.bin', content: base64Of(30.5 * 1024 * 1024) }],
    },
  });
  isError(t, over, 422, 'validation_error');
  t.deepEqual(over.body.errors, [{ path: 'attachments', message: 'The message is larger than 40 MB.' }]);
  t.is(over.body.details, undefined, "details carries only the spec's fields");
  t.is(await stored('rest 422'), 0);

  const under = await p.request('POST', '/emails', {
    key: team.key,
    body: {
      from,
      to,
      subject: 'rest under',
      text: 'x',
      scheduled_at: 'in 1 hour',
      attachments: [{ filename: 'big.bin', content: base64Of(Math.floor((MAX_MESSAGE_BYTES - 4096) / 4) * 3) }],
    },
  });
  t.is(under.status, 200, under.text);
  t.is(await stored('rest under'), 1);
});

async function session(): Promise<RawSmtp> {
  const s = await rawSmtp(port);
  const ehlo = await s.send('EHLO client.test');
  if (!ehlo.includes(`SIZE ${MAX_SUBMISSION_BYTES}`)) throw new Error(`no SIZE announced: ${ehlo}`);
  await s.send(`AUTH PLAIN ${Buffer.from(`\0apikey\0${team.key}`).toString('base64')}`);
  return s;
}

const header = (subject: string, extra = '') =>
  `From: ${from}\r\nTo: ${to}\r\nSubject: ${subject}\r\nMIME-Version: 1.0\r\n${extra}`;

test('SMTP: SIZE over the limit is refused at MAIL FROM; a body past SIZE gets 552 5.3.4 after DATA; nothing stored', async (t) => {
  const s = await session();
  t.regex(
    await s.send(`MAIL FROM:<${from}> SIZE=${MAX_SUBMISSION_BYTES + 1}`),
    /^552 .*exceeds fixed maximum message size/,
  );
  // A client that announces nothing and sends too much anyway.
  t.regex(await s.send(`MAIL FROM:<${from}>`), /^250/);
  t.regex(await s.send(`RCPT TO:<${to}>`), /^250/);
  t.regex(await s.send('DATA'), /^354/);
  const line = Buffer.from(`${'x'.repeat(998)}\r\n`);
  const body = Buffer.concat([
    Buffer.from(`${header('smtp over size')}\r\n`),
    ...Array.from({ length: Math.ceil(MAX_SUBMISSION_BYTES / line.length) + 10 }, () => line),
    Buffer.from('.\r\n'),
  ]);
  t.regex(await s.send(body, true), /^552 5\.3\.4 The message is larger than \d+ bytes/);
  // The session goes on.
  t.regex(await s.send('RSET'), /^250/);
  s.close();
  t.is(await stored('smtp over size'), 0);
});

test('SMTP: within SIZE but over 40 MB of content: 552 5.3.4, nothing stored', async (t) => {
  const s = await session();
  t.regex(await s.send(`MAIL FROM:<${from}>`), /^250/);
  t.regex(await s.send(`RCPT TO:<${to}>`), /^250/);
  t.regex(await s.send('DATA'), /^354/);
  const file = base64Of(30.5 * 1024 * 1024).replace(/.{76}/g, '$&\r\n');
  const mime =
    `${header('smtp over 40', 'Content-Type: multipart/mixed; boundary="b"\r\n')}\r\n--b\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n--b\r\n` +
    `Content-Type: application/octet-stream; name="big.bin"\r\nContent-Disposition: attachment; filename="big.bin"\r\nContent-Transfer-Encoding: base64\r\n\r\n${file}\r\n--b--\r\n.\r\n`;
  t.true(mime.length < MAX_SUBMISSION_BYTES);
  t.regex(
    await s.send(Buffer.from(mime), true),
    /^552 5\.3\.4 Invalid `attachments`: The message is larger than 40 MB\./,
  );
  s.close();
  t.is(await stored('smtp over 40'), 0);
});
