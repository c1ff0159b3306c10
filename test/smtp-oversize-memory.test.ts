// An oversized message costs our SMTP listeners no memory (shared/smtp/data.ts): 200 MB streamed at a 1 MB limit
// to the real MX process (inbound/main.ts, port 25's listener, open to anyone) and to the real mta process's
// SMTP submission listener, while the listener's resident memory is sampled from /proc. Both read the message to
// its final dot, drop it, and answer 552 5.3.4; the RSS stays near where it was.
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startEntry, type EntryProcess } from './helpers/processes.ts';
import { freePort } from './helpers/ports.ts';
import { rawSmtp, type RawSmtp } from './helpers/smtp-client.ts';
import { newId } from '../shared/ids.ts';

const LIMIT = 1024 * 1024;
const STREAMED = 200 * 1024 * 1024;
/**
 * What the listener may grow by while 200 MB pass through it: half the message, which a listener holding it would
 * pass at once. What it does grow by is read buffers that are already garbage: each TLS read and each chunk of the
 * DATA parser is an ArrayBuffer of its own, and V8 frees them at its next collection, which external memory alone
 * triggers only some tens of MB later. Sampled in the mta's submission thread (a heap of its own, with little else
 * allocating there): its array buffers rise to 45-50 MB and fall back, again and again; under a loaded CI the mta's
 * peak was 73 MB above its start. The MX's thread likewise (66 MB on a loaded machine; ~35 MB when it ran on the
 * inbound's main thread, where more allocates and collects).
 */
const BOUND = STREAMED / 2;

let p: Platform;
const started: EntryProcess[] = [];
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await Promise.all(started.map((e) => e.stop(2000)));
  await p?.close();
});

async function rss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** Streams the 200 MB DATA of an open transaction while sampling `pid`'s RSS; answers the reply and the figures. */
async function streamOversized(smtp: RawSmtp, pid: number) {
  const before = await rss(pid);
  let peak = before;
  const sampler = setInterval(
    () =>
      void rss(pid).then(
        (r) => (peak = Math.max(peak, r)),
        () => undefined,
      ),
    50,
  );
  const line = Buffer.from(`${'x'.repeat(998)}\r\n`);
  const chunk = Buffer.concat(Array.from({ length: 64 }, () => line));
  const started = performance.now();
  try {
    const reply = await smtp.pump(chunk, Math.ceil(STREAMED / chunk.length), '.\r\n');
    return { reply, before, peak, seconds: (performance.now() - started) / 1000 };
  } finally {
    clearInterval(sampler);
  }
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

test('the MX reads a 200 MB message at a 1 MB limit without holding it, then answers 552 5.3.4', async (t) => {
  const team = await p.createTeam();
  const domain = `rx-${newId().slice(-8)}.test`;
  await p
    .db('domains')
    .insert({ id: newId(), team_id: team.id, name: domain, status: 'verified', receiving: 'enabled' });
  const port = await freePort();
  const mx = startEntry('inbound/main.ts', p.config, {
    MX_HOST: '127.0.0.1',
    MX_PORT: String(port),
    INBOUND_MAX_MESSAGE_BYTES: String(LIMIT),
    INBOUND_GREETING_DELAY_MS: '0',
  });
  started.push(mx);
  await mx.logged('mx.listening', 120_000); // a start on a loaded machine may take a while
  const smtp = await rawSmtp(port, { plain: true });
  t.regex(await smtp.send('EHLO client.test'), new RegExp(`250[- ]SIZE ${LIMIT}`));
  t.regex(await smtp.send('MAIL FROM:<a@sender.test>'), /^250 /);
  t.regex(await smtp.send(`RCPT TO:<someone@${domain}>`), /^250 /);
  t.regex(await smtp.send('DATA'), /^354 /);
  const run = await streamOversized(smtp, mx.pid);
  smtp.close();
  t.log(`MX: ${mb(STREAMED)} in ${run.seconds.toFixed(1)} s; RSS ${mb(run.before)} before, peak ${mb(run.peak)}`);
  t.regex(run.reply, /^552 5\.3\.4 /);
  t.true(run.peak - run.before < BOUND, `the MX grew by ${mb(run.peak - run.before)}`);
  t.is((await p.db('received_messages').count({ n: '*' }).first())!.n, 0);
});

test('SMTP submission reads a 200 MB message at a 1 MB limit without holding it, then answers 552 5.3.4', async (t) => {
  const team = await p.createTeam();
  const [submission, submissionTls] = [await freePort(), await freePort()];
  const mta = startEntry('mta/main.ts', p.config, {
    SMTP_SUBMISSION_PORT: String(submission),
    SMTP_SUBMISSION_TLS_PORT: String(submissionTls),
    SMTP_SUBMISSION_MAX_BYTES: String(LIMIT),
    MTA_CONCURRENCY: '1',
  });
  started.push(mta);
  await mta.logged('submission.listening', 120_000);
  const smtp = await rawSmtp(submissionTls);
  t.regex(await smtp.send('EHLO client.test'), new RegExp(`250[- ]SIZE ${LIMIT}`));
  const plain = Buffer.from(`\0apikey\0${team.key}`).toString('base64');
  t.regex(await smtp.send(`AUTH PLAIN ${plain}`), /^235 /);
  t.regex(await smtp.send('MAIL FROM:<a@sender.test>'), /^250 /);
  t.regex(await smtp.send('RCPT TO:<someone@inbox.test>'), /^250 /);
  t.regex(await smtp.send('DATA'), /^354 /);
  const run = await streamOversized(smtp, mta.pid);
  smtp.close();
  t.log(
    `submission: ${mb(STREAMED)} in ${run.seconds.toFixed(1)} s; RSS ${mb(run.before)} before, peak ${mb(run.peak)}`,
  );
  t.regex(run.reply, /^552 5\.3\.4 /);
  t.true(run.peak - run.before < BOUND, `the mta grew by ${mb(run.peak - run.before)}`);
  t.is((await p.db('emails').where({ team_id: team.id }).count({ n: '*' }).first())!.n, 0);
});
