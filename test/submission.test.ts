import test from 'ava';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startDnsServer, type DnsServer } from './helpers/dns-server.ts';
import { mailDomain, sendingTeam, type SendingTeam } from './helpers/sending.ts';
import { rawSmtp } from './helpers/smtp-client.ts';
import { startSubmission, type Submission } from './helpers/submission.ts';
import { storedMessage } from './helpers/emails.ts';
import { RAW_INLINE_MAX_BYTES } from '../shared/emails/persist.ts';

let p: Platform;
let dns: DnsServer;
let starttls: Submission;
let implicit: Submission;
let ports: { starttls: number; implicit: number };
let team: SendingTeam;

test.before(async () => {
  dns = await startDnsServer();
  p = await startPlatform({ DNS_SERVERS: dns.address });
  mailDomain(dns, 'inbox-one.test');
  starttls = await startSubmission(p.deps, { implicitTls: false });
  implicit = await startSubmission(p.deps, { implicitTls: true });
  ports = { starttls: starttls.port, implicit: implicit.port };
  team = await sendingTeam(p, dns);
});
test.after.always(async () => {
  await starttls?.close();
  await implicit?.close();
  await p?.close();
  await dns?.close();
});

function transport(pass: string, implicitTls = false, user = 'apikey') {
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port: implicitTls ? ports.implicit : ports.starttls,
    secure: implicitTls,
    requireTLS: !implicitTls,
    tls: { rejectUnauthorized: false },
    auth: { user, pass },
  });
}

test('a message submitted with STARTTLS and AUTH takes the accept path and shows under GET /emails', async (t) => {
  const info = await transport(team.key).sendMail({
    from: `Shop <orders@${team.domain}>`,
    to: 'Ann <ann@inbox-one.test>',
    cc: 'carol@inbox-one.test',
    bcc: 'hidden@inbox-one.test',
    subject: 'Order 42',
    text: 'Thanks for your order.',
    html: '<p>Thanks for your order.</p>',
    attachments: [{ filename: 'order.txt', content: 'order 42' }],
  });
  const id = /queued as ([0-9a-f-]{36})/.exec(info.response)?.[1];
  t.truthy(id, info.response);
  const email = (await p.request('GET', `/emails/${id}`, { key: team.key })).body;
  t.like(email, {
    from: `Shop <orders@${team.domain}>`,
    subject: 'Order 42',
    to: ['Ann <ann@inbox-one.test>'],
    cc: ['carol@inbox-one.test'],
    bcc: ['hidden@inbox-one.test'],
    last_event: 'sent',
  });
  t.is(email.message_id, info.messageId);
  const list = await p.request('GET', '/emails', { key: team.key });
  t.is(list.status, 200);
  t.like(
    list.body.data.find((e: { id: string }) => e.id === id),
    { object: 'email', from: `Shop <orders@${team.domain}>`, subject: 'Order 42', message_id: info.messageId },
  );
  const row = await p.db('emails').where({ id }).first();
  t.is(row.source, 'smtp');
  t.is(row.raw_blob_key, null, 'a message this small is kept in email_raw, not the blob store');
  const raw = (await storedMessage(p.db, p.deps.blobs, id!))!.toString();
  t.false(/^bcc:/im.test(raw), 'the Bcc header is not delivered');
  t.true(raw.includes('Subject: Order 42'));
  const recipients = await p.db('email_recipients').where({ email_id: id }).orderBy('address');
  t.deepEqual(
    recipients.map((r) => [r.address, r.kind]),
    [
      ['ann@inbox-one.test', 'to'],
      ['carol@inbox-one.test', 'cc'],
      ['hidden@inbox-one.test', 'bcc'],
    ],
  );
  t.is((await p.db('email_attachments').where({ email_id: id })).length, 1);
  t.truthy(await p.deliverQueue.getJob(id!));
});

test('implicit TLS works the same', async (t) => {
  const info = await transport(team.key, true).sendMail({
    from: `a@${team.domain}`,
    to: 'ann@inbox-one.test',
    subject: 'tls',
    text: 'x',
  });
  t.regex(info.response, /^250 2\.0\.0 OK: queued as /);
});

const reply = (err: unknown) => (err as { response?: string }).response ?? '';

test('authentication: wrong username, unknown key, revoked key, no AUTH at all', async (t) => {
  const mail = { from: `a@${team.domain}`, to: 'ann@inbox-one.test', subject: 'x', text: 'x' };
  const wrongUser = await t.throwsAsync(transport(team.key, false, 'admin').sendMail(mail));
  t.regex(reply(wrongUser), /^535 5\.7\.8 Use the username `apikey`/);
  const unknown = await t.throwsAsync(transport('rk_nope').sendMail(mail));
  t.regex(reply(unknown), /^535 5\.7\.8 Authentication credentials invalid$/);
  const key = await p.request('POST', '/api-keys', {
    key: team.key,
    body: { name: 'soon revoked', permission: 'sending_access' },
  });
  await p.request('DELETE', `/api-keys/${key.body.id}`, { key: team.key });
  const revoked = await t.throwsAsync(transport(key.body.token).sendMail(mail));
  t.regex(reply(revoked), /^535 5\.7\.8 Authentication credentials invalid$/);
  const noAuth = nodemailer.createTransport({
    host: '127.0.0.1',
    port: ports.starttls,
    requireTLS: true,
    tls: { rejectUnauthorized: false },
  });
  const refused = await t.throwsAsync(noAuth.sendMail(mail));
  t.regex(reply(refused), /^530 5\.7\.0 /);
});

test('the STARTTLS port offers no AUTH before STARTTLS and refuses one sent anyway: the key never travels in the clear', async (t) => {
  const s = await rawSmtp(ports.starttls, { plain: true });
  try {
    const ehlo = await s.send('EHLO client.test');
    t.regex(ehlo, /^250-STARTTLS$/m);
    t.notRegex(ehlo, /AUTH/);
    const auth = await s.send(`AUTH PLAIN ${Buffer.from(`\0apikey\0${team.key}`).toString('base64')}`);
    t.regex(auth, /^5\d\d /, auth);
    t.regex(await s.send(`MAIL FROM:<a@${team.domain}>`), /^530 5\.7\.0 /);
  } finally {
    s.close();
  }
});

test('refusals keep their meaning as SMTP replies: unverified sender 550 5.7.1, unusable recipients 550 5.1.1', async (t) => {
  const unverified = await t.throwsAsync(
    transport(team.key).sendMail({ from: 'a@not-ours.test', to: 'ann@inbox-one.test', subject: 'x', text: 'x' }),
  );
  t.is((unverified as { responseCode?: number }).responseCode, 550);
  t.regex((unverified as Error).message, /5\.7\.1 The not-ours\.test domain is not verified/);
  const reserved = await t.throwsAsync(
    transport(team.key).sendMail({ from: `a@${team.domain}`, to: 'x@example.com', subject: 'x', text: 'x' }),
  );
  t.regex((reserved as Error).message, /550 5\.1\.1/);
});

test('a submitted message over RAW_INLINE_MAX_BYTES goes to the blob store before the accept; a smaller one stays in email_raw', async (t) => {
  const ids: string[] = [];
  // Sizes of the body as given: line ends grow to CRLF on the way.
  for (const size of [RAW_INLINE_MAX_BYTES * 0.9, RAW_INLINE_MAX_BYTES]) {
    const text =
      `${'a line of a long message body, sixty-four characters wide ....\n'.padStart(64, '.').repeat(Math.ceil(size / 64))}`.slice(
        0,
        size,
      ) + 'END-OF-BODY';
    const info = await transport(team.key).sendMail({
      from: `a@${team.domain}`,
      to: 'ann@inbox-one.test',
      subject: `size ${size}`,
      text,
    });
    ids.push(/queued as (\S+)/.exec(info.response)![1]);
  }
  const [small, large] = await Promise.all(ids.map((id) => p.db('emails').where({ id }).first()));
  t.is(small.raw_blob_key, null);
  t.is((await p.db('email_raw').where({ email_id: small.id })).length, 1);
  t.truthy(large.raw_blob_key);
  t.is((await p.db('email_raw').where({ email_id: large.id })).length, 0);
  const [smallRaw, largeRaw] = await Promise.all(
    [small, large].map((row) => storedMessage(p.db, p.deps.blobs, row.id)),
  );
  t.true(smallRaw!.length <= RAW_INLINE_MAX_BYTES && largeRaw!.length > RAW_INLINE_MAX_BYTES);
  for (const [row, raw] of [
    [small, smallRaw!],
    [large, largeRaw!],
  ] as const) {
    t.true(raw.toString().includes(`Subject: ${row.subject}`));
    t.true(raw.toString().includes('END-OF-BODY'), 'the whole message is stored');
  }
});

test('Idempotency-Key inside the message: a second submission gets the same id and sends nothing again', async (t) => {
  const mail = {
    from: `a@${team.domain}`,
    to: 'ann@inbox-one.test',
    subject: 'once over smtp',
    text: 'x',
    messageId: '<fixed-1@test>',
    date: new Date('2026-11-22T00:00:00Z'),
    headers: { 'Idempotency-Key': 'smtp-order-7' },
  };
  const first = await transport(team.key).sendMail(mail);
  const second = await transport(team.key).sendMail(mail);
  const id = /queued as (\S+)/.exec(first.response)![1];
  t.is(/queued as (\S+)/.exec(second.response)![1], id);
  t.is((await p.db('emails').where({ team_id: team.id, subject: 'once over smtp' })).length, 1);
  const raw = (await storedMessage(p.db, p.deps.blobs, id))!.toString();
  t.false(/idempotency-key/i.test(raw));
});

/** Files the blob store holds for a team (raw messages and attachments live under emails/<team>/). */
async function blobsOf(teamId: string): Promise<string[]> {
  try {
    return await readdir(path.join(p.config.BLOB_DIR, 'emails', teamId), { recursive: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

test('hostile sessions: bare LF, smuggling sequences, NUL and overlong lines are refused; nothing is stored', async (t) => {
  const team = await sendingTeam(p, dns);
  const head = (subject: string) => `From: a@${team.domain}\r\nTo: ann@inbox-one.test\r\nSubject: ${subject}\r\n\r\n`;
  const smuggled = `MAIL FROM:<a@${team.domain}>\r\nRCPT TO:<victim@inbox-one.test>\r\nDATA\r\nSubject: smuggled\r\n\r\nx\r\n`;
  const bodies = [
    `${head('lf')}bare\nlf\r\n`,
    // SMTP smuggling: a second message hidden behind an end of data that some other server would take for one
    // must not become a message of its own (every variant holds a bare CR or LF, refused as such).
    ...['\n.\r\n', '\r\n.\n', '\r.\r\n', '\n.\n', '\r.\r', '\r\n.\r'].map(
      (end) => `${head('s1')}hello${end}${smuggled}`,
    ),
    `${head('cr')}bare\rcr\r\n`,
    `${head('nul')}nul\0here\r\n`,
    `${head('long')}${'x'.repeat(1200)}\r\n`,
  ];
  for (const body of bodies) {
    const s = await rawSmtp(ports.implicit);
    t.regex(s.greeting, /^220 /);
    t.regex(await s.send('EHLO attacker.test'), /^250/m);
    t.regex(await s.send(`AUTH PLAIN ${Buffer.from(`\0apikey\0${team.key}`).toString('base64')}`), /^235/);
    t.regex(await s.send(`MAIL FROM:<a@${team.domain}>`), /^250/);
    t.regex(await s.send('RCPT TO:<ann@inbox-one.test>'), /^250/);
    t.regex(await s.send('DATA'), /^354/);
    const reply = await s.send(Buffer.from(`${body}.\r\n`, 'latin1'), true);
    t.regex(
      reply,
      /^554 5\.6\.0/,
      JSON.stringify(body.slice(body.indexOf('\r\n\r\n') + 4, body.indexOf('\r\n\r\n') + 12)),
    );
    t.regex(await s.send('RSET'), /^250/);
    s.close();
  }
  const garbage = await rawSmtp(ports.implicit);
  t.regex(await garbage.send('\u0001\u0002 HELLO?'), /^5\d\d/);
  garbage.close();
  t.is((await p.db('emails').where({ team_id: team.id }).count({ n: '*' }))[0].n, 0);
  t.deepEqual(await blobsOf(team.id), [], 'no raw message or attachment was written');
});
