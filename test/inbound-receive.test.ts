// The receive job on messages the real MX stored: fields and attachments of a received email, the
// email.received event, dropped reasons (parse_failed, team_blocked, no_mailbox), bounces left for later,
// a duplicate run that changes nothing, and the sweep with a real BullMQ worker.
import test from 'ava';
import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import type { SMTPServer } from 'smtp-server';
import type { Queue, Worker } from 'bullmq';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { createMxServer } from '../inbound/mx/server.ts';
import { processReceived, type ReceiveDeps } from '../inbound/receive/job.ts';
import { sweepReceived } from '../inbound/receive/sweep.ts';
import { testTls } from './helpers/test-tls.ts';
import { secretsKey } from '../shared/secrets.ts';
import { returnPathAddress } from '../shared/emails/mail-tokens.ts';
import { createQueue, createWorker, queues } from '../shared/queue.ts';
import { newId } from '../shared/ids.ts';
import { insertEmail } from './helpers/emails.ts';
import { until } from './helpers/wait.ts';

let p: Platform;
let mx: SMTPServer;
let port: number;
let deps: ReceiveDeps;

test.before(async () => {
  p = await startPlatform();
  deps = { db: p.db, blobs: p.deps.blobs, log: p.deps.log, secrets: secretsKey(p.config) };
  mx = createMxServer({
    ...deps,
    config: p.config,
    tls: await testTls(),
    enqueueReceive: async () => {},
  });
  await new Promise<void>((resolve) => mx.listen(0, '127.0.0.1', () => resolve()));
  port = (mx.server.address() as AddressInfo).port;
});
test.after.always(async () => {
  await new Promise<void>((resolve) => (mx ? mx.close(() => resolve()) : resolve()));
  await p?.close();
});

async function receivingTeam(name: string) {
  const team = await p.createTeam();
  const id = newId();
  await p.db('domains').insert({ id, team_id: team.id, name, status: 'verified', receiving: 'enabled' });
  return { team, domain: { id, name } };
}

async function send(to: string[], mail: Record<string, unknown>): Promise<string> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    tls: { rejectUnauthorized: false },
  });
  const info = await transport.sendMail({ ...mail, envelope: { from: 'alice@sender.test', to } });
  return /stored as (\S+)/.exec(info.response)![1];
}

test('a message becomes a received email with its attachments and an email.received event', async (t) => {
  const { team } = await receivingTeam('shop.test');
  const id = await send(['orders@shop.test'], {
    from: 'Alice <alice@sender.test>',
    to: 'Orders <orders@shop.test>',
    cc: 'cc@other.test',
    replyTo: 'reply@sender.test',
    subject: 'Your order ✓',
    messageId: '<m1@sender.test>',
    text: 'plain body',
    html: '<p>html <img src="cid:logo@x"></p>',
    headers: { 'X-Custom': 'yes' },
    attachments: [
      { filename: 'invoice.pdf', content: Buffer.from('%PDF-1.4 fake'), contentType: 'application/pdf' },
      { filename: 'logo.png', content: Buffer.from('png'), contentType: 'image/png', cid: 'logo@x' },
    ],
  });
  t.is(await processReceived(deps, id), 'processed');
  const email = await p.db('received_emails').where({ id }).first();
  t.is(email.team_id, team.id);
  t.is(email.from, 'Alice <alice@sender.test>');
  t.deepEqual(email.to, ['Orders <orders@shop.test>']);
  t.deepEqual(email.cc, ['cc@other.test']);
  t.deepEqual(email.reply_to, ['reply@sender.test']);
  t.is(email.subject, 'Your order ✓');
  t.is(email.message_id, '<m1@sender.test>');
  t.is(email.text.trim(), 'plain body');
  t.regex(email.html, /cid:logo@x/);
  t.is(email.dropped_reason, null);
  t.true((email.headers as [string, string][]).some(([n, v]) => n === 'X-Custom' && v === 'yes'));
  const attachments = await p.db('received_attachments').where({ email_id: id }).orderBy('position');
  // In the order the parts appear: nodemailer puts the inline image beside the HTML, before the attachment.
  t.deepEqual(
    attachments.map((a) => [a.filename, a.content_type, a.content_disposition, a.content_id]),
    [
      ['logo.png', 'image/png', 'inline', 'logo@x'],
      ['invoice.pdf', 'application/pdf', 'attachment', null],
    ],
  );
  t.is((await p.deps.blobs.get(attachments[1].blob_key))!.toString(), '%PDF-1.4 fake');
  t.is(attachments[1].size, 13);
  const events = await p.db('events').where({ team_id: team.id, type: 'email.received' });
  t.is(events.length, 1);
  const data = events[0].data;
  t.is(data.email_id, id);
  t.deepEqual(data.received_for, ['orders@shop.test']);
  t.deepEqual(data.attachments[0], {
    id: attachments[0].id,
    filename: 'logo.png',
    content_type: 'image/png',
    content_disposition: 'inline',
    content_id: 'logo@x',
  });
  t.is((await p.db('received_messages').where({ id }).first()).status, 'processed');
  t.is(await processReceived(deps, id), 'skipped', 'a duplicate run changes nothing');
  t.is((await p.db('events').where({ team_id: team.id, type: 'email.received' })).length, 1);
});

test('hostile messages end processed, unreadable MIME as parse_failed or readable, no NUL ever reaches a text column', async (t) => {
  const { team } = await receivingTeam('hostile-rx.test');
  const nested = (depth: number): string =>
    depth === 0
      ? 'Content-Type: text/plain\r\n\r\ncore\r\n'
      : `Content-Type: multipart/mixed; boundary="b${depth}"\r\n\r\n--b${depth}\r\n${nested(depth - 1)}--b${depth}--\r\n`;
  const corpus = [
    'Subject: broken\r\nContent-Type: multipart/mixed; boundary="never"\r\n\r\n--other\r\nContent-Type: text/plain\r\n\r\nlost\r\n',
    `Subject: deep\r\nMIME-Version: 1.0\r\n${nested(300)}`,
    Buffer.from('Subject: nul\u0000here\r\nFrom: a\u0000b@x.test\r\n\r\nbody\u0000with nul\r\n', 'latin1'),
    `Subject: ${'h'.repeat(200_000)}\r\n\r\nbody\r\n`,
    'Subject: =?utf-8?B?7aCA?=\r\nContent-Type: text/plain; charset=utf-16\r\n\r\n\u00d8\u0000\r\n',
  ];
  for (const raw of corpus) {
    const id = await send(['x@hostile-rx.test'], { raw });
    t.is(await processReceived(deps, id), 'processed');
    const email = await p.db('received_emails').where({ id }).first();
    t.true(email.dropped_reason === null || email.dropped_reason === 'parse_failed');
  }
  const nul = await p.db('received_emails').where({ team_id: team.id, subject: 'nulhere' }).first();
  t.truthy(nul, 'the NUL was removed, the rest kept');
});

test('a suspended team drops as team_blocked; a domain no longer receiving drops as no_mailbox; no body, no attachments, no event', async (t) => {
  const blocked = await receivingTeam('blocked.test');
  const gone = await receivingTeam('gone.test');
  const mail = { from: 'a@sender.test', subject: 'S', text: 'T', attachments: [{ filename: 'a.txt', content: 'a' }] };
  const a = await send(['x@blocked.test'], mail);
  const b = await send(['x@gone.test'], mail);
  await p.db('teams').where({ id: blocked.team.id }).update({ status: 'suspended' });
  await p.db('domains').where({ id: gone.domain.id }).update({ receiving: 'disabled' });
  for (const [id, reason] of [
    [a, 'team_blocked'],
    [b, 'no_mailbox'],
  ]) {
    t.is(await processReceived(deps, id), 'processed');
    const email = await p.db('received_emails').where({ id }).first();
    t.is(email.dropped_reason, reason);
    t.is(email.subject, 'S');
    t.is(email.html, null);
    t.is(email.text, null);
    t.is((await p.db('received_attachments').where({ email_id: id })).length, 0);
  }
  t.is(
    (await p.db('events').whereIn('team_id', [blocked.team.id, gone.team.id]).where({ type: 'email.received' })).length,
    0,
  );
});

test('a bounce is only marked processed and never becomes a received email', async (t) => {
  const { team, domain } = await receivingTeam('bounce-rx.test');
  const emailId = await insertEmail(p.db, p.deps.blobs, { teamId: team.id, domain, to: ['r@example.net'] });
  const id = await send([returnPathAddress(deps.secrets, emailId, 'send', domain.name)], {
    raw: 'Subject: Undelivered\r\n\r\nx\r\n',
  });
  t.is(await processReceived(deps, id), 'processed');
  t.is((await p.db('received_messages').where({ id }).first()).status, 'processed');
  t.falsy(await p.db('received_emails').where({ id }).first());
});

test.serial('the sweep hands a message a crash left stored to a real worker', async (t) => {
  await receivingTeam('sweep.test');
  const id = await send(['x@sweep.test'], { from: 'a@sender.test', subject: 'swept', text: 'x' });
  const queue: Queue = createQueue(p.config, queues.receive);
  let worker: Worker | undefined;
  try {
    t.is(await sweepReceived(p.db, queue, new Date()), 0, 'a fresh message is left to its own enqueue');
    t.true((await sweepReceived(p.db, queue, new Date(Date.now() + 120_000))) >= 1);
    worker = createWorker(p.config, queues.receive, async (job) => processReceived(deps, String(job.data.messageId)));
    await until(async () => (await p.db('received_messages').where({ id }).first()).status === 'processed', {
      what: 'the swept message processed',
      intervalMs: 50,
    });
    t.is((await p.db('received_emails').where({ id }).first()).subject, 'swept');
  } finally {
    await worker?.close();
    await queue.close();
  }
});
