// Durability against real kills on the accepting side. The api (POST /emails) and the mta (SMTP submission)
// each run as their own process and are killed with SIGKILL while requests are in flight; then an mta delivers
// what was committed. An answered send (200, or 250) is never lost. An email committed but never answered
// (killed between the commit and the answer) is delivered too. The enqueue after the commit may be lost
// (the api hands jobs to Redis up to 20 ms after answering), and the mta's sweep recovers it after
// STUCK_QUEUED_MS. A recipient gets a second copy only when it was in delivery when the mta was killed (the
// 250-to-commit window, as in mta-crash.test.ts).
import test from 'ava';
import type { ChildProcess } from 'node:child_process';
import nodemailer from 'nodemailer';
import { apiSender, startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { Children, exited } from './helpers/processes.ts';
import { httpAnswers, killRig, tcpListens, untilServing } from './helpers/kill-rig.ts';
import { createQueue, queues } from '../shared/queue.ts';
import { ACTIVE_GRACE_MS } from '../mta/delivery/sweep.ts';
import { freePort } from './helpers/ports.ts';

const MTA_CONCURRENCY = 4;
/** Answers (200 or 250) before the kill. */
const KILL_AFTER = 20;
/** Sends in flight at once. */
const LANES = 6;
/**
 * At most this many sends per test: the kill comes once deliveries reach the sink, or here when they have not yet (an
 * accept, at the mta's own priority in its thread, outpaces a delivery).
 */
const MAX_SENDS = 150;

let w: MtaWorld;
let rig: ReturnType<typeof killRig>;
// Every child this file starts is killed at the end, whatever happened.
const children = new Children();
test.before(async () => {
  // A short pause before the sink's 250: deliveries are in flight when the mta is killed.
  w = await startMtaWorld({ sink: { dataDelayMs: 30 } });
  rig = killRig(w, children, MTA_CONCURRENCY);
});
test.after.always(async () => {
  await children.killAll();
  await w?.close();
});

/** Lets time pass where a test shows that nothing happens meanwhile; waiting for something is until()'s. */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
test.serial(
  'api killed with SIGKILL mid-stream: every answered send delivered, every committed one exactly once',
  async (t) => {
    t.timeout(150_000);
    const { team, domain } = await apiSender(w, 'sender-api-kill.test');
    const rcptDomain = 'api-kill-rcpt.test';
    w.mx(rcptDomain);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const api = rig.startChild('api/main.ts', { PORT: String(port) });
    // Generous: on a loaded machine the child's start (tsx) alone can take many seconds.
    await untilServing(api, 'the api answering HTTP', httpAnswers(url));

    const answered = new Map<string, string>();
    const refused: string[] = [];
    const failedBeforeKill: string[] = [];
    let sent = 0;
    let killedAt = 0;
    const lane = async () => {
      while (!killedAt && sent < MAX_SENDS) {
        const address = `user${sent++}@${rcptDomain}`;
        let status: number;
        let body: { id?: string };
        try {
          const res = await fetch(`${url}/emails`, {
            method: 'POST',
            headers: {
              'user-agent': 'postwerk-tests/1.0',
              authorization: `Bearer ${team.key}`,
              'content-type': 'application/json',
            },
            body: JSON.stringify({
              from: `Shop <shop@${domain.name}>`,
              to: address,
              subject: `api kill ${address}`,
              text: 'Hello',
            }),
          });
          status = res.status;
          body = await res.json();
        } catch (err) {
          // The api died under this request (or before it): no answer, so the client may not count on anything.
          if (!killedAt) failedBeforeKill.push(`${address}: ${(err as Error).message}`);
          return;
        }
        if (status !== 200 || !body.id) {
          refused.push(`${address}: ${status} ${JSON.stringify(body)}`);
          return;
        }
        answered.set(body.id, address);
        if (answered.size >= KILL_AFTER && !killedAt) {
          killedAt = Date.now();
          api.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: LANES }, lane));
    if (!killedAt) api.kill('SIGKILL');
    await exited(api);
    t.deepEqual(refused, [], 'every send before the kill was accepted');
    t.deepEqual(failedBeforeKill, [], 'no request failed before the kill');
    t.true(answered.size >= KILL_AFTER, `${answered.size} answers before the kill`);
    t.is(api.signalCode, 'SIGKILL', 'the api died of the kill');

    // What the kill left: committed emails, and of those, how many never reached Redis as a deliver job (the api
    // enqueues up to 20 ms after its answer); the sweep must find those. A statement the dead api had sent may
    // still be finishing in PostgreSQL: let it land first.
    await sleep(500);
    const atKill = await rig.storedOf(team.id);
    const queue = createQueue(w.p.config, queues.deliver);
    let lostEnqueues = 0;
    try {
      for (const id of atKill.keys()) if ((await queue.getJobState(id)) === 'unknown') lostEnqueues++;
    } finally {
      await queue.close();
    }
    t.is(rig.atSink(rcptDomain).length, 0, 'no mta ran yet: nothing delivered');

    // The lost enqueues wait for the sweep: STUCK_QUEUED_MS after their creation, at the next SWEEP_EVERY_MS.
    await rig.deliverEverything(team.id, { submission: 0, submissionTls: 0 });

    const stored = await rig.storedOf(team.id);
    const lost = [...answered]
      .filter(([id, address]) => stored.get(id)?.address !== address)
      .map(([id, address]) => `${id} ${address}`);
    t.deepEqual(lost, [], 'every answered id is stored with its recipient');
    t.deepEqual(
      [...stored.values()].filter((s) => s.status !== 'delivered').map((s) => s.address),
      [],
      'every committed email delivered',
    );
    const notOnce = [...stored.values()]
      .map((s) => ({ address: s.address, n: w.sink.deliveredTo(s.address).length }))
      .filter((c) => c.n !== 1);
    t.deepEqual(notOnce, [], 'every committed email at the sink exactly once (the mta was never killed)');
    t.deepEqual(rig.strays(rcptDomain, stored), [], 'nothing at the sink that was not committed');
    const events = await rig.deliveredEvents([...stored.keys()]);
    t.deepEqual(
      [...stored.keys()].filter((id) => events.get(id) !== 1),
      [],
      'one email.delivered per email',
    );
    t.log(
      `${sent} sends started, ${answered.size} answered, ${stored.size} committed, ${stored.size - answered.size} committed but unanswered, ${lostEnqueues} committed without a deliver job (recovered by the sweep)`,
    );
  },
);

/** A message that got its 250, by email id. */
type Accepted = Map<string, { address: string; messageId: string; subject: string }>;

/**
 * Submits messages to `user<n>@<rcptDomain>` over `LANES` pooled sessions until `KILL_AFTER` got their 250 while
 * deliveries stream out, then kills `mta` with SIGKILL; what got a 250, and what failed before the kill.
 */
async function submitUntilKilled(mta: ChildProcess, port: number, key: string, from: string, rcptDomain: string) {
  const transport = nodemailer.createTransport({
    pool: true,
    maxConnections: 4,
    host: '127.0.0.1',
    port,
    secure: false,
    requireTLS: true,
    tls: { rejectUnauthorized: false },
    auth: { user: 'apikey', pass: key },
  });
  const accepted: Accepted = new Map();
  const failedBeforeKill: string[] = [];
  let sent = 0;
  let killedAt = 0;
  const lane = async () => {
    while (!killedAt && sent < MAX_SENDS) {
      const n = sent++;
      const address = `user${n}@${rcptDomain}`;
      const subject = `smtp kill ${n}`;
      let info: { response: string; messageId: string };
      try {
        info = await transport.sendMail({
          from,
          to: address,
          subject,
          text: 'Hello',
          headers: { 'X-Test-Sequence': String(n) },
        });
      } catch (err) {
        if (!killedAt) failedBeforeKill.push(`${address}: ${(err as Error).message}`);
        return;
      }
      const id = /queued as ([0-9a-f-]{36})/.exec(info.response)?.[1];
      if (!id) {
        failedBeforeKill.push(`${address}: a 250 without an id: ${info.response}`);
        return;
      }
      accepted.set(id, { address, messageId: info.messageId, subject });
      // The kill comes while messages stream in and deliveries stream out: a few rounds of ours at the sink
      // already (delivered and recorded: never to be sent again), some in delivery, the rest waiting.
      const delivering = rig.atSink(rcptDomain).length >= 2 * MTA_CONCURRENCY;
      if (accepted.size >= KILL_AFTER && (delivering || sent >= MAX_SENDS) && !killedAt) {
        killedAt = Date.now();
        mta.kill('SIGKILL');
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: LANES }, lane));
  } finally {
    transport.close();
  }
  if (!killedAt) mta.kill('SIGKILL');
  await exited(mta);
  return { accepted, failedBeforeKill, sent };
}

/**
 * Who was in delivery at the kill (leased, not delivered) and who is at the sink: only an address in both may reach
 * the sink twice. Call it once the dead process's last statements have landed.
 */
async function inDeliveryAtKill(teamId: string, rcptDomain: string) {
  const leased = new Set<string>(
    (
      await w.p
        .db('email_recipients')
        .where({ team_id: teamId })
        .whereNotNull('leased_until')
        .whereNot({ status: 'delivered' })
        .pluck('address')
    ).map((a: string) => a.toLowerCase()),
  );
  // Everything the dead process delivered is at the sink by now (a session whose final dot the sink had read ends
  // there even if our side is gone, as with a real MX): a second copy can only be of one of these.
  const atSink = new Set(
    rig
      .atSink(rcptDomain)
      .flatMap((m) => m.to)
      .map((a) => a.toLowerCase())
      .filter((a) => a.endsWith(`@${rcptDomain}`)),
  );
  return { leased, atSink };
}

/**
 * Time passes (as in mta-crash.test.ts): the dead process's leases run out (30 s in real life), and its deliver jobs
 * BullMQ still shows active (those that had not leased yet) pass ACTIVE_GRACE_MS, after which the sweep takes them
 * back (30 s in real life). The leases expired and the jobs aged.
 */
async function passKilledWorkTime(teamId: string) {
  const stranded = await w.p
    .db('email_recipients')
    .where({ team_id: teamId })
    .whereNotNull('leased_until')
    .update({ leased_until: new Date(Date.now() - 1000) });
  const queue = createQueue(w.p.config, queues.deliver);
  let staleActive = 0;
  try {
    for (const job of await queue.getJobs(['active'])) {
      await w.p.redis.hset(queue.toKey(job.id!), 'processedOn', String(Date.now() - ACTIVE_GRACE_MS - 1000));
      staleActive++;
    }
  } finally {
    await queue.close();
  }
  return { stranded, staleActive };
}

/** Ids of accepted messages whose delivered copies do not carry the Message-ID and Subject that were submitted. */
const mismatched = (accepted: Accepted) =>
  [...accepted]
    .filter(
      ([, a]) =>
        !w.sink.deliveredTo(a.address).every((m) => {
          const head = m.raw.toString('latin1').split('\r\n\r\n')[0];
          return (
            new RegExp(`^Message-ID: ${a.messageId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\r?$`, 'im').test(head) &&
            head.includes(`Subject: ${a.subject}\r\n`)
          );
        }),
    )
    .map(([id]) => id);

test.serial(
  'mta killed with SIGKILL during SMTP submission: every 250 stored and delivered, a second copy only for what was in delivery',
  async (t) => {
    t.timeout(150_000);
    const { team, domain } = await apiSender(w, 'sender-smtp-kill.test');
    const rcptDomain = 'smtp-kill-rcpt.test';
    w.mx(rcptDomain);
    const ports = { submission: await freePort(), submissionTls: await freePort() };
    const mta = rig.startMta(ports);
    await untilServing(mta, 'the mta listening for submission', tcpListens(ports.submission));

    const from = `Shop <shop@${domain.name}>`;
    const { accepted, failedBeforeKill, sent } = await submitUntilKilled(
      mta,
      ports.submission,
      team.key,
      from,
      rcptDomain,
    );
    t.deepEqual(failedBeforeKill, [], 'every message before the kill got its 250');
    t.true(accepted.size >= KILL_AFTER, `${accepted.size} 250s before the kill`);
    t.is(mta.signalCode, 'SIGKILL', 'the mta died of the kill');

    // A statement the dead process had sent may still be finishing in PostgreSQL: let it land first.
    await sleep(500);
    const atKill = await inDeliveryAtKill(team.id, rcptDomain);
    const { stranded, staleActive } = await passKilledWorkTime(team.id);

    await rig.deliverEverything(team.id, ports);

    const stored = await rig.storedOf(team.id);
    const lost = [...accepted]
      .filter(([id, a]) => stored.get(id)?.address !== a.address)
      .map(([id, a]) => `${id} ${a.address}`);
    t.deepEqual(lost, [], 'every message that got a 250 is stored with its recipient');
    t.deepEqual(
      [...stored.values()].filter((s) => s.status !== 'delivered').map((s) => s.address),
      [],
      'every stored email delivered',
    );
    // Each stored email at the sink: once, or twice only if it was in delivery at the kill.
    const copies = [...stored.values()].map((s) => ({
      address: s.address.toLowerCase(),
      n: w.sink.deliveredTo(s.address).length,
    }));
    const wrong = copies.filter(
      (c) => c.n < 1 || c.n > 2 || (c.n === 2 && !(atKill.leased.has(c.address) && atKill.atSink.has(c.address))),
    );
    t.deepEqual(
      wrong,
      [],
      'each stored email at the sink once; twice only if it was leased, and already at the sink, at the kill',
    );
    const duplicates = copies.reduce((sum, c) => sum + Math.max(0, c.n - 1), 0);
    t.true(duplicates <= Math.min(stranded, MTA_CONCURRENCY), 'a second copy only for what was in flight at the kill');
    t.deepEqual(rig.strays(rcptDomain, stored), [], 'nothing at the sink that was not stored');
    // The message delivered is the one that got the 250: its Message-ID and Subject.
    t.deepEqual(
      mismatched(accepted),
      [],
      'the delivered message carries the Message-ID and Subject that were submitted',
    );
    const events = await rig.deliveredEvents([...stored.keys()]);
    t.deepEqual(
      [...stored.keys()].filter((id) => events.get(id) !== 1),
      [],
      'one email.delivered per email',
    );
    t.log(
      `${sent} messages started, ${accepted.size} got 250, ${stored.size} stored, ${stored.size - accepted.size} stored without a 250; at the kill ${atKill.atSink.size} at the sink, ${atKill.leased.size} in delivery (${stranded} leases expired), ${staleActive} jobs active; duplicates: ${duplicates}`,
    );
  },
);
