// Scale-out: two api and two mta copies (as systemd's postwerk-api@1/@2 and postwerk-mta@1/@2 run them: one
// configuration, each copy its own listening ports) on one PostgreSQL and one Redis. Mail goes in through both apis
// (REST) and both mtas (SMTP submission); both mtas deliver. One mta copy is killed with SIGKILL in the middle of the
// deliveries, and the other finishes its work: every email reaches `delivered`, and the loopback sink has each one
// exactly once. The kill is placed outside the 250-to-commit window (the one place a copy can be sent twice,
// docs/guarantees.md): the sink holds its DATA answers while it happens, so no delivery of the killed copy has its
// 250 and lacks its commit.
import test from 'ava';
import type { ChildProcess } from 'node:child_process';
import nodemailer from 'nodemailer';
import { apiSender, startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { Children, exited } from './helpers/processes.ts';
import { httpAnswers, killRig, tcpListens, untilServing } from './helpers/kill-rig.ts';
import { freePort } from './helpers/ports.ts';
import { createQueue, queues } from '../shared/queue.ts';
import { ACTIVE_GRACE_MS } from '../mta/delivery/sweep.ts';
import { LEASE_MS, RENEW_EVERY_MS } from '../mta/delivery/lease.ts';
import { until } from './helpers/wait.ts';

const RCPT = 'scale-out-rcpt.test';
/**
 * REST sends before the kill and around it (each half through each api), and SMTP submissions (half through each
 * mta, all answered before the kill).
 */
const REST_BEFORE = 60;
const REST_AFTER = 120;
const SMTP = 40;

let w: MtaWorld;
let rig: ReturnType<typeof killRig>;
const children = new Children();
test.before(async () => {
  // A short pause before each 250: deliveries are in flight at any moment.
  w = await startMtaWorld({ sink: { dataDelayMs: 15 } });
  rig = killRig(w, children, 20);
  w.mx(RCPT);
});
test.after.always(async () => {
  await children.killAll();
  await w?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Posts `addresses` to the apis at `urls` (round robin, 8 lanes); the ids answered, and what failed. */
async function postAll(urls: string[], key: string, from: string, addresses: string[]) {
  const ids: string[] = [];
  const failed: string[] = [];
  let next = 0;
  const lane = async () => {
    while (next < addresses.length) {
      const n = next++;
      const res = await fetch(`${urls[n % urls.length]}/emails`, {
        method: 'POST',
        headers: {
          'user-agent': 'postwerk-tests/1.0',
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ from, to: addresses[n], subject: `scale-out ${addresses[n]}`, text: 'Hello' }),
      });
      const body = (await res.json()) as { id?: string };
      if (res.status === 200 && body.id) ids.push(body.id);
      else failed.push(`${addresses[n]}: ${res.status} ${JSON.stringify(body)}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, lane));
  return { ids, failed };
}

/** Submits `addresses` over SMTP, half to each port (2 pooled STARTTLS sessions each); the ids of the 250s. */
async function submitAll(ports: number[], key: string, from: string, addresses: string[]) {
  const transports = ports.map((port) =>
    nodemailer.createTransport({
      pool: true,
      maxConnections: 2,
      host: '127.0.0.1',
      port,
      secure: false,
      requireTLS: true,
      tls: { rejectUnauthorized: false },
      auth: { user: 'apikey', pass: key },
      // The mta copies run at MTA_NICE beside the rest of a loaded suite: a greeting may take long (a CI run's took
      // over nodemailer's 30 s); this test is about exactly-once delivery, not latency.
      greetingTimeout: 120_000,
      socketTimeout: 120_000,
    }),
  );
  try {
    const infos = await Promise.all(
      addresses.map((to, n) =>
        transports[n % transports.length].sendMail({ from, to, subject: `scale-out ${to}`, text: 'Hello' }),
      ),
    );
    return infos.map((info) => /queued as ([0-9a-f-]{36})/.exec(info.response)?.[1] ?? `no id: ${info.response}`);
  } finally {
    for (const t of transports) t.close();
  }
}

/**
 * The killed copy's work, handed on as time would (LEASE_MS and ACTIVE_GRACE_MS, 30 s each in real life): once every
 * lease of the living copy has been renewed since `killedAt` (RENEW_EVERY_MS), a lease that runs out by killedAt +
 * LEASE_MS is the dead copy's, and is made to run out now; deliver jobs still active, and so never renewed by a
 * living worker, are aged past ACTIVE_GRACE_MS (a living job has leased long before and takeLease keeps two jobs
 * off one recipient). The sweep of the living copy re-enqueues them. Answers how many leases were the dead copy's.
 */
async function passKilledWorkTime(teamId: string, killedAt: number): Promise<number> {
  await sleep(RENEW_EVERY_MS + 3000 - (Date.now() - killedAt));
  const stranded = await w.p
    .db('email_recipients')
    .where({ team_id: teamId })
    .whereNot({ status: 'delivered' })
    .where('leased_until', '<=', new Date(killedAt + LEASE_MS))
    .update({ leased_until: new Date(Date.now() - 1000) });
  const queue = createQueue(w.p.config, queues.deliver);
  try {
    for (const job of await queue.getJobs(['active']))
      if ((job.processedOn ?? 0) < killedAt)
        await w.p.redis.hset(queue.toKey(job.id!), 'processedOn', String(Date.now() - ACTIVE_GRACE_MS - 1000));
  } finally {
    await queue.close();
  }
  return stranded;
}

/**
 * Once both copies (metrics on `metricsPorts`) have delivered and the sink has 40 messages: the sink holds its DATA
 * answers, the 250s given before are left to be committed, `victim` is killed with SIGKILL, and the sink lets go (what
 * the dead copy had sent is not kept: it never got its 250). When, the sink's count then, and each copy's deliveries.
 */
async function killMidRun(victim: ChildProcess, metricsPorts: number[]) {
  const deliveredBy = await until(
    async () => {
      const counts = await Promise.all(metricsPorts.map(deliveredCount));
      return counts.every((n) => n > 0) && w.sink.messages.length >= 40 && counts;
    },
    { what: 'both mta copies delivering', timeoutMs: 120_000, intervalMs: 50 },
  );
  const release = w.sink.hold();
  // Every message the sink answered 250 is recorded before the kill: the guarantee leaves a second copy only inside
  // the 250-to-commit window (group commits take milliseconds, longer on a loaded machine: waited for, not guessed).
  const accepted = [...new Set(w.sink.messages.flatMap((m) => m.to.map((a) => a.toLowerCase())))];
  await until(
    async () => {
      const recorded = await w.p
        .db('email_recipients')
        .whereIn('address', accepted)
        .where({ status: 'delivered' })
        .countDistinct({ n: 'address' })
        .first();
      return Number(recorded?.n) === accepted.length;
    },
    { what: 'every 250 the sink gave recorded as delivered', timeoutMs: 30_000, intervalMs: 20 },
  );
  const killedAt = Date.now();
  victim.kill('SIGKILL');
  await exited(victim);
  // The kernel closed the dead copy's sockets before its exit was reported, so their ends are already waiting in this
  // process's event loop; once the sink has read them, the messages they carried are dropped at the release, not kept.
  await sleep(500);
  const atKill = w.sink.messages.length;
  release();
  return { killedAt, atKill, deliveredBy };
}

/** The `delivered` outcomes an mta copy counted, read from its metrics listener. */
async function deliveredCount(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return Number(/^postwerk_deliveries_total\{outcome="delivered"\} (\d+)/m.exec(text)?.[1] ?? 0);
}

test('two api and two mta copies on one database: every email delivered once, through a SIGKILL of one mta', async (t) => {
  t.timeout(240_000);
  const started = Date.now();
  const { team, domain } = await apiSender(w, 'sender-scale-out.test');
  const from = `Shop <shop@${domain.name}>`;
  const apiPorts = [await freePort(), await freePort()];
  const submission = [await freePort(), await freePort()];
  const apis = apiPorts.map((port) => rig.startChild('api/main.ts', { PORT: String(port) }));
  // Each copy its own metrics port, as a second copy on one host needs (systemd/postwerk-mta@.service).
  const metricsPorts = [await freePort(), await freePort()];
  const mtas: ChildProcess[] = submission.map((port, i) =>
    rig.startChild('mta/main.ts', {
      MTA_CONCURRENCY: '20',
      SMTP_SUBMISSION_PORT: String(port),
      SMTP_SUBMISSION_TLS_PORT: '0',
      METRICS_MTA_PORT: String(metricsPorts[i]),
    }),
  );
  const urls = apiPorts.map((port) => `http://127.0.0.1:${port}`);
  await Promise.all([
    ...apis.map((api, i) => untilServing(api, `api copy ${i + 1} answering`, httpAnswers(urls[i]))),
    ...mtas.map((mta, i) => untilServing(mta, `mta copy ${i + 1} listening`, tcpListens(submission[i]))),
  ]);
  t.log(`4 processes serving after ${Date.now() - started} ms`);

  const address = (n: number) => `u${n}@${RCPT}`;
  const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => address(from + i));
  // First SMTP submission through both mtas, REST through both apis beside it, every answer awaited.
  const [first, smtpIds] = await Promise.all([
    postAll(urls, team.key, from, range(0, REST_BEFORE)),
    submitAll(submission, team.key, from, range(1000, SMTP)),
  ]);
  t.deepEqual(first.failed, [], 'every REST send before the kill answered 200');
  t.deepEqual(
    smtpIds.filter((id) => id.startsWith('no id')),
    [],
    'every submission answered 250 with its id',
  );

  // Then more REST sends, and mid-way the kill: both copies have delivered, and have deliveries in hand.
  const [after, { killedAt, atKill, deliveredBy }] = await Promise.all([
    postAll(urls, team.key, from, range(500, REST_AFTER)),
    killMidRun(mtas[0], metricsPorts),
  ]);
  t.deepEqual(after.failed, [], 'every REST send around the kill answered 200');
  t.is(mtas[0].signalCode, 'SIGKILL', 'mta copy 1 died of the kill');
  const stranded = await passKilledWorkTime(team.id, killedAt);
  t.true(stranded > 0, 'the killed copy had deliveries in hand');

  await until(
    async () => {
      const open = await w.p
        .db('email_recipients')
        .where({ team_id: team.id })
        .whereNot({ status: 'delivered' })
        .count({ n: '*' })
        .first();
      return Number(open?.n) === 0 || undefined;
    },
    { what: 'every recipient delivered by the living mta copy', timeoutMs: 60_000, intervalMs: 100 },
  );
  const answered = [...first.ids, ...smtpIds, ...after.ids];
  const stored = await rig.storedOf(team.id);
  t.is(stored.size, REST_BEFORE + SMTP + REST_AFTER, 'every send stored once');
  t.deepEqual(
    answered.filter((id) => !stored.has(id)),
    [],
    'every answered id stored',
  );
  const notOnce = [...stored.values()]
    .map((s) => ({ address: s.address, n: w.sink.deliveredTo(s.address).length }))
    .filter((c) => c.n !== 1);
  t.deepEqual(notOnce, [], 'every email at the sink exactly once');
  t.deepEqual(rig.strays(RCPT, stored), [], 'nothing at the sink that was not sent');
  const messageIds = new Set(
    w.sink.messages.map((m) => /^Message-ID:\s*(\S+)/im.exec(m.raw.toString('latin1').split('\r\n\r\n')[0])?.[1]),
  );
  t.is(messageIds.size, stored.size, 'one distinct Message-ID per email at the sink');
  const events = await rig.deliveredEvents([...stored.keys()]);
  t.deepEqual(
    [...stored.keys()].filter((id) => events.get(id) !== 1),
    [],
    'one email.delivered per email',
  );
  t.log(
    `delivered by copy 1 / copy 2 before the kill: ${deliveredBy.join(' / ')}; ` +
      `${stored.size} emails, ${atKill} at the sink at the kill, ${stranded} leases of the killed copy handed on; ` +
      `${Date.now() - started} ms in all`,
  );
  await Promise.all([...apis, mtas[1]].map(async (c) => (c.kill('SIGTERM'), exited(c))));
});
