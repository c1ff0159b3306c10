// The MX listener against a real SMTP client on loopback: which recipients it takes (refusals at RCPT, never
// after DATA), that the raw message and its row exist when the 250 arrives, STARTTLS, the early-talker
// pause, and a hostile corpus that never takes the listener down.
import test from 'ava';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import type { SMTPServer } from 'smtp-server';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { createMxServer } from '../inbound/mx/server.ts';
import { testTls } from './helpers/test-tls.ts';
import { secretsKey } from '../shared/secrets.ts';
import { returnPathAddress } from '../shared/emails/mail-tokens.ts';
import { newId } from '../shared/ids.ts';
import { insertEmail } from './helpers/emails.ts';
import { until } from './helpers/wait.ts';
import { storedBytes } from './helpers/receive-job.ts';
import { RAW_INLINE_MAX_BYTES } from '../shared/receiving/raw.ts';

let p: Platform;
let mx: SMTPServer;
let port: number;
const enqueued: string[] = [];

test.before(async () => {
  p = await startPlatform({ INBOUND_MAX_MESSAGE_BYTES: String(512 * 1024) });
  const tls = await testTls();
  mx = createMxServer({
    config: p.config,
    db: p.db,
    blobs: p.deps.blobs,
    log: p.deps.log,
    secrets: secretsKey(p.config),
    tls,
    enqueueReceive: async (ids) => void enqueued.push(...ids),
  });
  await new Promise<void>((resolve) => mx.listen(0, '127.0.0.1', () => resolve()));
  port = (mx.server.address() as AddressInfo).port;
});
test.after.always(async () => {
  await new Promise<void>((resolve) => (mx ? mx.close(() => resolve()) : resolve()));
  await p?.close();
});

async function domain(
  teamId: string,
  name: string,
  options: { receiving?: 'enabled' | 'disabled'; receivingHost?: string } = {},
) {
  const id = newId();
  await p.db('domains').insert({
    id,
    team_id: teamId,
    name,
    status: 'verified',
    receiving: options.receiving ?? 'enabled',
    receiving_host: options.receivingHost ?? '@',
  });
  return { id, name };
}

const client = () =>
  nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, tls: { rejectUnauthorized: false } });
const message = (to: string | string[], extra: Record<string, unknown> = {}) =>
  client().sendMail({ from: 'Alice <alice@sender.example>', to, subject: 'Hi', text: 'Hello', ...extra });

test.serial('mail to a receiving domain at @ is stored (blob and row) when the 250 arrives', async (t) => {
  const team = await p.createTeam();
  const d = await domain(team.id, 'acme-at.test');
  const info = await message('Bob@Acme-At.test');
  t.regex(info.response, /^250 2\.0\.0 OK: stored as [0-9a-f-]{36}/);
  const id = /stored as (\S+)/.exec(info.response)![1];
  const row = await p.db('received_messages').where({ id }).first();
  t.truthy(row, 'the row is committed before the 250');
  t.is(row.team_id, team.id);
  t.is(row.domain_id, d.id);
  t.deepEqual(row.rcpt_to, ['Bob@acme-at.test'], 'the domain part normalised by smtp-server');
  t.is(row.status, 'stored');
  t.is(row.kind, 'mail');
  t.true(row.tls, 'nodemailer upgraded with STARTTLS');
  const raw = await storedBytes(p, id);
  t.truthy(raw);
  t.is(raw!.length, row.size);
  t.regex(raw!.toString(), /Subject: Hi/);
  // RFC 5321 §4.4: our Received field first, naming the client, us, ESMTPS (STARTTLS), the copy's id and its recipient.
  t.regex(
    raw!.toString(),
    new RegExp(
      `^Received: from \\S+ \\(\\[(::ffff:)?127\\.0\\.0\\.1\\]\\)\r\n\tby ${p.config.PLATFORM_INBOUND_HOST.replace(/\./g, '\\.')} with ESMTPS id ${id}\r\n\tfor <Bob@acme-at\\.test>;\r\n\t\\w{3}, \\d{2} \\w{3} \\d{4} \\d{2}:\\d{2}:\\d{2} \\+0000\r\n`,
    ),
  );
  t.true(enqueued.includes(id), 'the receive job was enqueued after the commit');
});

test.serial('a receiving_host label takes mail at <label>.<domain> only', async (t) => {
  const team = await p.createTeam();
  await domain(team.id, 'acme-label.test', { receivingHost: 'inbound' });
  const info = await message('x@inbound.acme-label.test');
  t.regex(info.response, /^250 /);
  const err = await t.throwsAsync(message('x@acme-label.test'));
  t.is((err as { responseCode?: number }).responseCode, 550);
  t.regex((err as { response?: string }).response ?? '', /5\.1\.1/);
});

test.serial('unknown and receiving-disabled domains are refused at RCPT with 550 5.1.1 and leave no row', async (t) => {
  const team = await p.createTeam();
  await domain(team.id, 'disabled.test', { receiving: 'disabled' });
  const before = (await p.db('received_messages').count('* as n'))[0].n;
  for (const to of ['a@nowhere.test', 'a@disabled.test']) {
    const err = await t.throwsAsync(message(to));
    t.is((err as { responseCode?: number }).responseCode, 550, to);
    t.is((err as { command?: string }).command, 'RCPT TO', `${to} is refused at RCPT, not after DATA`);
    t.regex((err as { response?: string }).response ?? '', /^550 5\.1\.1/);
  }
  t.is((await p.db('received_messages').count('* as n'))[0].n, before);
});

test.serial('recipients at two teams: one row and one copy of the bytes per team, refused ones left out', async (t) => {
  const a = await p.createTeam();
  const b = await p.createTeam();
  await domain(a.id, 'team-a.test');
  await domain(b.id, 'team-b.test');
  const info = await message(['one@team-a.test', 'two@team-a.test', 'three@team-b.test', 'nobody@elsewhere.test']);
  t.deepEqual(info.rejected, ['nobody@elsewhere.test']);
  const rows = await p.db('received_messages').whereIn('team_id', [a.id, b.id]).orderBy('team_id');
  t.is(rows.length, 2);
  t.deepEqual(rows.find((r) => r.team_id === a.id).rcpt_to, ['one@team-a.test', 'two@team-a.test']);
  t.deepEqual(rows.find((r) => r.team_id === b.id).rcpt_to, ['three@team-b.test']);
  const copies = await p.db('received_raw').whereIn('message_id', [rows[0].id, rows[1].id]);
  t.deepEqual(copies.map((c) => c.team_id).sort(), [a.id, b.id].sort(), 'each team owns its copy');
});

test.serial(
  'a return-path address of one of our emails is accepted as a bounce; a forged one is refused',
  async (t) => {
    const team = await p.createTeam();
    const d = await domain(team.id, 'sender-rp.test');
    const emailId = await insertEmail(p.db, p.deps.blobs, { teamId: team.id, domain: d, to: ['someone@example.net'] });
    const secrets = secretsKey(p.config);
    const address = returnPathAddress(secrets, emailId, 'send', d.name);
    const info = await client().sendMail({
      envelope: { from: '', to: [address] },
      raw: 'From: MAILER-DAEMON@example.net\r\nSubject: Undelivered\r\n\r\nbounce\r\n',
    });
    t.regex(info.response, /^250 /);
    const row = await p.db('received_messages').where({ email_id: emailId }).first();
    t.is(row.kind, 'bounce');
    t.is(row.team_id, team.id);
    const forged = returnPathAddress(Buffer.alloc(32, 7), emailId, 'send', d.name);
    const err = await t.throwsAsync(
      client().sendMail({ envelope: { from: '', to: [forged] }, raw: 'Subject: x\r\n\r\nx\r\n' }),
    );
    t.is((err as { responseCode?: number }).responseCode, 550);
  },
);

test.serial('EHLO offers STARTTLS, SIZE, 8BITMIME, SMTPUTF8 and PIPELINING, and no AUTH', async (t) => {
  const socket = net.connect(port, '127.0.0.1');
  let text = '';
  socket.on('data', (d) => (text += d.toString()));
  await until(() => /^220 /m.test(text), { what: 'the greeting', timeoutMs: 5000 });
  socket.write('EHLO client.test\r\n');
  await until(() => /^250 /m.test(text.split('\r\n').slice(1).join('\r\n')), { what: 'a 250', timeoutMs: 5000 });
  socket.destroy();
  for (const f of ['STARTTLS', 'SIZE 524288', '8BITMIME', 'SMTPUTF8', 'PIPELINING'])
    t.true(text.includes(`250-${f}`) || text.includes(`250 ${f}`), f);
  t.false(text.includes('AUTH'));
});

test.serial('a client that talks before the greeting is cut with 421', async (t) => {
  const socket = net.connect(port, '127.0.0.1');
  let text = '';
  socket.on('data', (d) => (text += d.toString()));
  socket.on('connect', () => socket.write('EHLO early.test\r\n'));
  await until(() => text.includes('421'), { what: 'the 421', timeoutMs: 5000 });
  socket.destroy();
  t.regex(text, /421 .*talk too soon/i);
});

test.serial(
  'hostile corpus: each message is stored or refused with a clear reply, and the listener lives on',
  async (t) => {
    const team = await p.createTeam();
    await domain(team.id, 'hostile.test');
    const nested = (depth: number): string =>
      depth === 0
        ? 'Content-Type: text/plain\r\n\r\ncore\r\n'
        : `Content-Type: multipart/mixed; boundary="b${depth}"\r\n\r\n--b${depth}\r\n${nested(depth - 1)}--b${depth}--\r\n`;
    const corpus: Record<string, string | Buffer> = {
      brokenBoundary:
        'Subject: broken\r\nContent-Type: multipart/mixed; boundary="never"\r\n\r\n--other\r\nContent-Type: text/plain\r\n\r\nlost\r\n',
      deepNesting: `Subject: deep\r\nMIME-Version: 1.0\r\n${nested(300)}`,
      nulBytes: Buffer.from('Subject: nul\u0000here\r\nFrom: a\u0000b@x.test\r\n\r\nbody\u0000with nul\r\n', 'latin1'),
      hugeHeader: `Subject: ${'h'.repeat(200_000)}\r\nX-Many: ${'v, '.repeat(30_000)}\r\n\r\nbody\r\n`,
      noHeaders: '\r\n\r\n\r\n',
      bareLf: 'Subject: lf\nContent-Type: text/plain\n\nonly LF\n',
    };
    for (const [name, raw] of Object.entries(corpus)) {
      const info = await client().sendMail({ envelope: { from: 'x@sender.test', to: [`${name}@hostile.test`] }, raw });
      t.regex(info.response, /^250 /, name);
    }
    const tooBig = await t.throwsAsync(
      client().sendMail({
        envelope: { from: 'x@sender.test', to: ['big@hostile.test'] },
        raw: `Subject: big\r\n\r\n${'x'.repeat(600 * 1024)}\r\n`,
      }),
    );
    t.is((tooBig as { responseCode?: number }).responseCode, 552, 'larger than INBOUND_MAX_MESSAGE_BYTES');
    t.is((await p.db('received_messages').where({ team_id: team.id })).length, Object.keys(corpus).length);
    t.regex((await message('after@hostile.test')).response, /^250 /, 'the listener still takes mail');
  },
);

test.serial('a storage failure answers 451 4.3.0 (the sender retries) and leaves no row', async (t) => {
  const team = await p.createTeam();
  await domain(team.id, 'disk-full.test');
  const failing = createMxServer({
    // This file's platform refuses more than 512 KB; this MX takes a message past RAW_INLINE_MAX_BYTES.
    config: { ...p.config, INBOUND_MAX_MESSAGE_BYTES: 2 * RAW_INLINE_MAX_BYTES },
    db: p.db,
    log: p.deps.log,
    secrets: secretsKey(p.config),
    tls: await testTls(),
    blobs: {
      ...p.deps.blobs,
      put: async () => {
        throw new Error('ENOSPC');
      },
    },
    enqueueReceive: async () => {},
  });
  await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', () => resolve()));
  // A small message's bytes go with its row (received_raw): there the database is what fails, in the same statement.
  await p.db.raw(`create function pw_t_full() returns trigger language plpgsql as $$
    begin raise exception 'could not extend file: No space left on device'; end $$`);
  await p.db.raw(`create trigger pw_t_full before insert on received_raw for each row
    when (new.team_id = '${team.id}') execute function pw_t_full()`);
  try {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: (failing.server.address() as AddressInfo).port,
      secure: false,
      tls: { rejectUnauthorized: false },
    });
    for (const text of ['t', 'x'.repeat(RAW_INLINE_MAX_BYTES + 1)]) {
      const err = await t.throwsAsync(
        transport.sendMail({ from: 'a@sender.test', to: 'x@disk-full.test', subject: 's', text }),
      );
      t.is((err as { responseCode?: number }).responseCode, 451);
      t.regex((err as { response?: string }).response ?? '', /^451 4\.3\.0/);
      t.is((await p.db('received_messages').where({ team_id: team.id })).length, 0);
    }
  } finally {
    await p.db.raw('drop trigger pw_t_full on received_raw; drop function pw_t_full()');
    await new Promise<void>((resolve) => failing.close(() => resolve()));
  }
});
