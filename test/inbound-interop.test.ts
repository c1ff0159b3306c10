// The MX against real SMTP peers that are not ours: swaks (Debian's) as a sending client, plain and with
// STARTTLS, and Postfix relaying to the MX as a smarthost would. Each message goes the production way: the
// listener stores it, the receive job runs from the real queue (BullMQ worker) and the received email appears.
// Needs swaks, the postfix package and root (.ci/run installs them), like test/mta-postfix.test.ts.
import test from 'ava';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { SMTPServer } from 'smtp-server';
import type { Queue, Worker } from 'bullmq';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startPostfix, type Postfix } from './helpers/postfix.ts';
import { createMxServer } from '../inbound/mx/server.ts';
import { processReceived, type ReceiveDeps } from '../inbound/receive/job.ts';
import { enqueueReceive } from '../inbound/receive/sweep.ts';
import { testTls } from './helpers/test-tls.ts';
import { secretsKey } from '../shared/secrets.ts';
import { createQueue, createWorker, queues } from '../shared/queue.ts';
import { newId } from '../shared/ids.ts';
import { freePort } from './helpers/ports.ts';
import { until } from './helpers/wait.ts';
import { storedBytes } from './helpers/receive-job.ts';

const run = promisify(execFile);
const SWAKS = '/usr/bin/swaks';

let p: Platform;
let mx: SMTPServer;
let port: number;
let queue: Queue;
let worker: Worker;
let dir: string;

test.before(async () => {
  p = await startPlatform();
  const deps: ReceiveDeps = { db: p.db, blobs: p.deps.blobs, log: p.deps.log, secrets: secretsKey(p.config) };
  queue = createQueue(p.config, queues.receive);
  worker = createWorker(p.config, queues.receive, async (job) => processReceived(deps, String(job.data.messageId)));
  mx = createMxServer({
    ...deps,
    config: p.config,
    tls: await testTls(),
    enqueueReceive: (ids) => enqueueReceive(queue, ids),
  });
  await new Promise<void>((resolve) => mx.listen(0, '127.0.0.1', () => resolve()));
  port = (mx.server.address() as AddressInfo).port;
  dir = await mkdtemp(path.join(tmpdir(), 'pw-interop-'));
});
test.after.always(async () => {
  await new Promise<void>((resolve) => (mx ? mx.close(() => resolve()) : resolve()));
  await worker?.close();
  await queue?.close();
  await p?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function receivingDomain(name: string) {
  const team = await p.createTeam();
  await p.db('domains').insert({ id: newId(), team_id: team.id, name, status: 'verified', receiving: 'enabled' });
  return team;
}

/** The received email once the receive job has processed the message, with its stored message row. */
async function received(messageId: string) {
  const email = await until(
    async () => {
      const row = await p.db('received_messages').where({ id: messageId, status: 'processed' }).first();
      return row ? p.db('received_emails').where({ id: messageId }).first() : undefined;
    },
    { what: `received email ${messageId}`, timeoutMs: 20_000, intervalMs: 50 },
  );
  const message = await p.db('received_messages').where({ id: messageId }).first();
  const raw = (await storedBytes(p, messageId))!.toString();
  return { email, message, raw };
}

/** swaks's exit code and its transcript (it prints the session on stdout). */
async function swaks(args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(SWAKS, [
      '--server',
      '127.0.0.1',
      '--port',
      String(port),
      '--helo',
      'swaks.client.test',
      ...args,
    ]);
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

const storedId = (out: string) => /250 2\.0\.0 OK: stored as (\S+)/.exec(out)?.[1];

for (const tls of [false, true]) {
  test.serial(
    `swaks ${tls ? 'with STARTTLS' : 'in plain text'}: a message with an attachment becomes a received email`,
    async (t) => {
      const domain = tls ? 'swaks-tls.test' : 'swaks-plain.test';
      const team = await receivingDomain(domain);
      const file = path.join(dir, `report-${tls}.pdf`);
      await writeFile(file, '%PDF-1.4 swaks attachment');
      const { code, out } = await swaks([
        ...(tls ? ['--tls'] : []),
        '--from',
        'alice@sender.test',
        '--to',
        `Bob@${domain}`,
        '--header',
        'From: Alice <alice@sender.test>',
        '--header',
        `To: Bob <bob@${domain}>`,
        '--header',
        `Subject: Quarterly report ${tls}`,
        '--body',
        'See the attached report.',
        '--attach-type',
        'application/pdf',
        '--attach-name',
        'report.pdf',
        '--attach',
        `@${file}`,
      ]);
      t.is(code, 0, out);
      t.is(/STARTTLS/.test(out) && /TLS started/.test(out), tls, 'STARTTLS offered and taken only when asked');
      const id = storedId(out);
      t.truthy(id, out);
      const { email, message, raw } = await received(id!);
      t.is(message.team_id, team.id);
      t.is(message.tls, tls);
      t.is(message.helo, 'swaks.client.test');
      t.is(message.envelope_from, 'alice@sender.test');
      t.deepEqual(message.rcpt_to, [`Bob@${domain}`]);
      t.regex(raw, /X-Mailer: swaks/);
      t.is(email.team_id, team.id);
      t.is(email.from, 'Alice <alice@sender.test>');
      t.deepEqual(email.to, [`Bob <bob@${domain}>`]);
      t.is(email.subject, `Quarterly report ${tls}`);
      t.is(email.text.trim(), 'See the attached report.');
      t.is(email.dropped_reason, null);
      const attachments = await p.db('received_attachments').where({ email_id: id }).orderBy('position');
      t.deepEqual(
        attachments.map((a) => [a.filename, a.content_type, a.content_disposition]),
        [['report.pdf', 'application/pdf', 'attachment']],
      );
      t.is((await p.deps.blobs.get(attachments[0].blob_key))!.toString(), '%PDF-1.4 swaks attachment');
      const [event] = await p.db('events').where({ team_id: team.id, type: 'email.received' });
      t.deepEqual(event.data.received_for, [`Bob@${domain}`]);
    },
  );
}

test.serial('swaks to an unknown recipient gets 550 5.1.1 at RCPT and nothing is stored', async (t) => {
  await receivingDomain('swaks-known.test');
  const before = Number((await p.db('received_messages').count({ n: '*' }))[0].n);
  const { code, out } = await swaks(['--from', 'alice@sender.test', '--to', 'nobody@swaks-unknown.test']);
  t.is(code, 24, 'swaks: no RCPTs accepted');
  t.regex(
    out,
    /-> RCPT TO:<nobody@swaks-unknown\.test>\s+<\*\* 550 5\.1\.1 <nobody@swaks-unknown\.test>: Recipient address rejected/,
  );
  t.notRegex(out, /-> DATA/, 'never got as far as DATA');
  t.is(Number((await p.db('received_messages').count({ n: '*' }))[0].n), before);
});

test.serial(
  "Postfix relays to the MX: the message arrives with Postfix's Received header and received_for right",
  async (t) => {
    const domain = 'relay-rx.test';
    const team = await receivingDomain(domain);
    // Postfix as the domain's front MX (a smarthost setup): it accepts carol@ and relays to our MX's port.
    let postfix: Postfix | undefined;
    try {
      const postfixPort = await freePort();
      postfix = await startPostfix({
        host: '127.0.0.1',
        port: postfixPort,
        domain,
        known: [`carol@${domain}`],
        relayTo: { host: '127.0.0.1', port },
      });
      const pf = postfix;
      const client = nodemailer.createTransport({
        host: '127.0.0.1',
        port: postfixPort,
        secure: false,
        tls: { rejectUnauthorized: false },
      });
      const info = await client.sendMail({
        from: 'Dave <dave@outside.test>',
        to: `Carol <carol@${domain}>`,
        subject: 'Through Postfix',
        text: 'relayed body',
        messageId: '<relay-1@outside.test>',
        envelope: { from: 'dave@outside.test', to: [`carol@${domain}`] },
      });
      t.regex(info.response, /^250 2\.0\.0 Ok: queued as/);
      const message = await until(async () => p.db('received_messages').where({ team_id: team.id }).first(), {
        what: 'the relayed message at our MX',
        timeoutMs: 30_000,
        intervalMs: 50,
      }).catch(async (err) => {
        t.log(await pf.log());
        throw err;
      });
      const { email, raw } = await received(message.id);
      t.deepEqual(message.rcpt_to, [`carol@${domain}`]);
      t.is(message.envelope_from, 'dave@outside.test');
      t.is(message.helo, `mx.${domain}`, "Postfix's myhostname in its EHLO");
      t.is(message.remote_ip, '127.0.0.1');
      // Postfix's own trace header (RFC 5321 §4.4), added when it took the message from nodemailer.
      t.regex(
        raw,
        new RegExp(`^Received: from .*\\s+by mx\\.${domain.replace('.', '\\.')} \\(Postfix\\) with ESMTPS? `, 'm'),
      );
      t.is(email.subject, 'Through Postfix');
      t.is(email.message_id, '<relay-1@outside.test>');
      t.is(email.text.trim(), 'relayed body');
      t.true(
        (email.headers as [string, string][]).some(
          ([n, v]) => n.toLowerCase() === 'received' && /by mx\.relay-rx\.test \(Postfix\)/.test(v),
        ),
      );
      const [event] = await p.db('events').where({ team_id: team.id, type: 'email.received' });
      t.deepEqual(event.data.received_for, [`carol@${domain}`]);
      t.regex(
        await pf.log(),
        new RegExp(
          `to=<carol@${domain}>, relay=127\\.0\\.0\\.1\\[127\\.0\\.0\\.1\\]:${port}, .*status=sent \\(250 2\\.0\\.0 OK: stored as ${message.id}\\)`,
        ),
      );
    } finally {
      await postfix?.close();
    }
  },
);
