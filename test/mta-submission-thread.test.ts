// The mta's submission listeners run in a thread of their own (mta/submission/thread.ts): in the real mta process,
// a submitted message is accepted and counted in the process's metrics (relayed from the thread), and a SIGTERM
// lets a session in the middle of its DATA finish with its 250 before the process ends cleanly.
import test from 'ava';
import { PassThrough } from 'node:stream';
import nodemailer from 'nodemailer';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startDnsServer, type DnsServer } from './helpers/dns-server.ts';
import { mailDomain, sendingTeam, type SendingTeam } from './helpers/sending.ts';
import { startEntry, type EntryProcess } from './helpers/processes.ts';
import { freePort } from './helpers/ports.ts';
import { scrape } from './helpers/metrics.ts';
import { until } from './helpers/wait.ts';

let p: Platform;
let dns: DnsServer;
let team: SendingTeam;
let mta: EntryProcess | undefined;
const ports = { submission: 0, metrics: 0 };

test.before(async () => {
  dns = await startDnsServer();
  p = await startPlatform({ DNS_SERVERS: dns.address });
  mailDomain(dns, 'inbox-thread.test');
  team = await sendingTeam(p, dns);
  ports.submission = await freePort();
  ports.metrics = await freePort();
  mta = startEntry('mta/main.ts', p.config, {
    SMTP_HOST: '127.0.0.1',
    SMTP_SUBMISSION_PORT: String(ports.submission),
    SMTP_SUBMISSION_TLS_PORT: String(await freePort()),
    METRICS_MTA_PORT: String(ports.metrics),
    METRICS_HOST: '127.0.0.1',
  });
  await mta.logged('mta.started', 120_000);
});
test.after.always(async () => {
  await mta?.stop();
  await p?.close();
  await dns?.close();
});

const transport = () =>
  nodemailer.createTransport({
    host: '127.0.0.1',
    port: ports.submission,
    secure: false,
    requireTLS: true,
    tls: { rejectUnauthorized: false },
    auth: { user: 'apikey', pass: team.key },
  });

test.serial(
  'a message submitted to the mta process is committed, and the thread’s metrics reach /metrics',
  async (t) => {
    const info = await transport().sendMail({
      from: `Shop <orders@${team.domain}>`,
      to: 'ann@inbox-thread.test',
      subject: 'Through the thread',
      text: 'Accepted by the submission thread.',
    });
    const id = /queued as ([0-9a-f-]{36})/.exec(info.response)?.[1];
    if (!id) return t.fail(info.response);
    const email = (await p.request('GET', `/emails/${id}`, { key: team.key })).body as { subject: string };
    t.is(email.subject, 'Through the thread');
    const m = await until(
      async () => {
        const s = await scrape(ports.metrics);
        return s.value('postwerk_smtp_submission_sessions_open', { listener: 'starttls' }) === 0 && s;
      },
      { timeoutMs: 10_000, what: 'the session closed in the metrics' },
    );
    t.is(m.value('postwerk_emails_accepted_total', { surface: 'smtp' }), 1);
    t.is(m.value('postwerk_smtp_submission_sessions_total', { listener: 'starttls' }), 1);
    t.is(m.value('postwerk_smtp_submission_sessions_total', { listener: 'tls' }), 0);
  },
);

test.serial('SIGTERM during a DATA: the session finishes with its 250, then the mta exits cleanly', async (t) => {
  const body = new PassThrough();
  body.write('The first half of the message, sent before the SIGTERM.\r\n');
  const sending = transport().sendMail({
    from: `Shop <orders@${team.domain}>`,
    to: 'bob@inbox-thread.test',
    subject: 'Across a stop',
    text: body,
  });
  const running = mta as EntryProcess;
  await until(
    async () => (await scrape(ports.metrics)).value('postwerk_smtp_submission_sessions_open', { listener: 'starttls' }),
    { timeoutMs: 10_000, what: 'the session open' },
  );
  // The DATA is under way (the first half sent); the stop must wait for it.
  await new Promise((r) => setTimeout(r, 300));
  const stopped = running.exit(30_000);
  process.kill(running.pid, 'SIGTERM');
  await new Promise((r) => setTimeout(r, 300));
  body.end('The second half, after it.\r\n');
  const info = await sending;
  const id = /queued as ([0-9a-f-]{36})/.exec(info.response)?.[1];
  if (!id) return t.fail(info.response);
  const email = (await p.request('GET', `/emails/${id}`, { key: team.key })).body as { subject: string };
  t.is(email.subject, 'Across a stop');
  t.is(await stopped, 0);
  t.false(running.output().includes('submission.thread_exited'));
});
