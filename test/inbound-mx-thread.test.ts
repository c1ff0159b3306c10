// The MX listener runs in a thread of the inbound process (inbound/mx/thread.ts): in the real inbound process, a
// message over STARTTLS is stored, processed by the receive job on the main thread, and counted in the process's
// metrics (relayed from the thread: the open-sessions gauge back at 0 after a TLS session); a SIGTERM lets a session
// in the middle of its DATA finish with its 250 before the process ends cleanly.
import test from 'ava';
import { PassThrough } from 'node:stream';
import nodemailer from 'nodemailer';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startEntry, type EntryProcess } from './helpers/processes.ts';
import { freePort } from './helpers/ports.ts';
import { scrape } from './helpers/metrics.ts';
import { until } from './helpers/wait.ts';
import { newId } from '../shared/ids.ts';

let p: Platform;
let inbound: EntryProcess | undefined;
const ports = { mx: 0, metrics: 0 };
const domain = `mx-thread-${newId().slice(-8)}.test`;

test.before(async () => {
  p = await startPlatform();
  const team = await p.createTeam();
  await p
    .db('domains')
    .insert({ id: newId(), team_id: team.id, name: domain, status: 'verified', receiving: 'enabled' });
  ports.mx = await freePort();
  ports.metrics = await freePort();
  inbound = startEntry('inbound/main.ts', p.config, {
    MX_HOST: '127.0.0.1',
    MX_PORT: String(ports.mx),
    METRICS_INBOUND_PORT: String(ports.metrics),
    METRICS_HOST: '127.0.0.1',
    INBOUND_GREETING_DELAY_MS: '0',
  });
  await inbound.logged('mx.listening', 120_000);
});
test.after.always(async () => {
  await inbound?.stop();
  await p?.close();
});

// A sending MTA: STARTTLS when offered (our certificate is self-signed here), no AUTH.
const transport = () =>
  nodemailer.createTransport({ host: '127.0.0.1', port: ports.mx, secure: false, tls: { rejectUnauthorized: false } });

const storedId = (response: string) => /stored as ([0-9a-f-]{36})/.exec(response)?.[1];

test.serial(
  'a message to the inbound process is stored, processed, and the thread’s metrics reach /metrics',
  async (t) => {
    const info = await transport().sendMail({
      envelope: { from: 'someone@sender.test', to: [`ann@${domain}`, `nobody@elsewhere.test`] },
      from: 'someone@sender.test',
      to: `ann@${domain}`,
      subject: 'Through the MX thread',
      text: 'Accepted by the MX thread, processed on the main thread.',
    });
    t.deepEqual(info.rejected, ['nobody@elsewhere.test']);
    const id = storedId(info.response);
    if (!id) return t.fail(info.response);
    const row = await until(
      async () => {
        const r = await p.db('received_messages').where({ id }).first('status', 'tls');
        return r?.status === 'processed' && r;
      },
      { timeoutMs: 30_000, what: 'the receive job processed the message' },
    );
    t.true(row.tls, 'the session was upgraded by STARTTLS');
    const m = await until(
      async () => {
        const s = await scrape(ports.metrics);
        return s.value('postwerk_mx_sessions_total') === 1 && s.value('postwerk_mx_sessions_open') === 0 && s;
      },
      { timeoutMs: 10_000, what: 'the session counted and closed in the metrics' },
    );
    t.is(m.value('postwerk_mx_recipients_total', { result: 'accepted' }), 1);
    t.is(m.value('postwerk_mx_recipients_total', { result: 'refused' }), 1);
    t.is(m.value('postwerk_mx_messages_total', { result: 'accepted' }), 1);
    t.is(m.value('postwerk_receive_jobs_total', { result: 'processed' }), 1);
  },
);

test.serial('SIGTERM during a DATA: the session finishes with its 250, then the inbound exits cleanly', async (t) => {
  const body = new PassThrough();
  body.write('The first half of the message, sent before the SIGTERM.\r\n');
  const sending = transport().sendMail({
    envelope: { from: 'someone@sender.test', to: [`bob@${domain}`] },
    from: 'someone@sender.test',
    to: `bob@${domain}`,
    subject: 'Across a stop',
    text: body,
  });
  const running = inbound as EntryProcess;
  await until(async () => (await scrape(ports.metrics)).value('postwerk_mx_sessions_open'), {
    timeoutMs: 10_000,
    what: 'the session open',
  });
  // The DATA is under way (the first half sent); the stop must wait for it.
  await new Promise((r) => setTimeout(r, 300));
  const stopped = running.exit(30_000);
  process.kill(running.pid, 'SIGTERM');
  await new Promise((r) => setTimeout(r, 300));
  body.end('The second half, after it.\r\n');
  const info = await sending;
  const id = storedId(info.response);
  if (!id) return t.fail(info.response);
  t.truthy(await p.db('received_messages').where({ id }).first('id'), 'stored before the 250');
  t.is(await stopped, 0);
  t.false(running.output().includes('mx.thread_exited'));
});
