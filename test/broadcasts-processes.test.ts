// Broadcasts with the real processes: the api, the worker and the mta each run as their own process (as production
// starts them) and deliver a broadcast to loopback SMTP sinks — several recipient domains, one of them slow (a second
// sink on 127.0.0.2), one address answering 4xx before 250 — and every delivered message is parsed: its recipient,
// its merge values, its DKIM signature, its one-click unsubscribe. Then the same with SIGKILLs: the worker killed
// twice mid-fan-out and the mta once mid-delivery; the broadcast resumes from its committed cursor and nobody gets a
// second email (a second copy of the same email only for what was in flight when the mta died, as process-kills.test.ts
// bounds it). And a scheduled broadcast: the running worker's sweep takes it when it comes due, not before.
import test from 'ava';
import type { ChildProcess } from 'node:child_process';
import { simpleParser } from 'mailparser';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { Children, exited, startEntry, type EntryProcess } from './helpers/processes.ts';
import { httpAnswers, untilServing } from './helpers/kill-rig.ts';
import { until } from './helpers/wait.ts';
import { freePort } from './helpers/ports.ts';
import { tokenOf, unsubscribeUrl } from './helpers/topic-sends.ts';
import { verifiedDomain } from './helpers/sending.ts';
import { liftSandbox } from '../shared/teams/teams.ts';
import { newId } from '../shared/ids.ts';

let w: MtaWorld;
let slow: SmtpSink;
const children = new Children();
/** Entries started with startEntry (their log read): stopped at the end, whatever happened. */
const entries: EntryProcess[] = [];
test.before(async () => {
  w = await startMtaWorld();
  // The slow domain's MX: a sink of its own on another loopback address, the same port.
  slow = await startSmtpSink({ host: '127.0.0.2', port: w.sink.port, dataDelayMs: 400 });
});
test.after.always(async () => {
  await Promise.all(entries.map((e) => e.stop(1000)));
  await children.killAll();
  await slow?.close();
  await w?.close();
});

const DOMAINS = ['bp-fast.test', 'bp-other.test', 'bp-slow.test'];

/** `n` contacts spread over the domains, in a new segment of a new sender team, written as an import writes them. */
async function world(name: string, n: number) {
  // Verified for real against the loopback DNS (every record published): the worker's domain sweep keeps it so.
  const team = await w.p.createTeam();
  await liftSandbox(w.p.db, team.id, 'us-east-1');
  await verifiedDomain(w.p, w.dns, team, `${name}-news.test`);
  const from = `News <news@${name}-news.test>`;
  w.mx(DOMAINS[0]);
  w.mx(DOMAINS[1]);
  w.mx(DOMAINS[2], ['127.0.0.2']);
  const segment = newId();
  await w.p.db('segments').insert({ id: segment, team_id: team.id, name: 'All' });
  const rows = Array.from({ length: n }, (_, i) => ({
    id: newId(),
    team_id: team.id,
    email: `${name}${i}@${DOMAINS[i % 3]}`,
    first_name: `Reader${i}`,
  }));
  await w.p.db.batchInsert('contacts', rows, 500);
  await w.p.db.batchInsert(
    'contact_segments',
    rows.map((r) => ({ segment_id: segment, contact_id: r.id, team_id: team.id })),
    500,
  );
  return { team, from, segment, rows };
}

async function startApi(): Promise<{ api: ChildProcess; url: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const api = children.start('api/main.ts', w.p.config, { PORT: String(port), PUBLIC_BASE_URL: url });
  await untilServing(api, 'the api answering HTTP', httpAnswers(url), 120_000);
  return { api, url };
}

const startWorker = (url: string, batch: number) =>
  children.start('worker/main.ts', w.p.config, { PUBLIC_BASE_URL: url, BROADCAST_BATCH_SIZE: String(batch) });
/** The mta's slots for broadcast copies: at most this many are in flight at once. */
const MTA_BULK_CONCURRENCY = 4;
const startMta = (url: string) =>
  children.start('mta/main.ts', w.p.config, {
    PUBLIC_BASE_URL: url,
    MTA_CONCURRENCY: '8',
    MTA_BULK_CONCURRENCY: String(MTA_BULK_CONCURRENCY),
  });

async function createAndSend(url: string, key: string, body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${url}/broadcasts`, {
    method: 'POST',
    headers: { 'user-agent': 'postwerk-tests/1.0', authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, send: true }),
  });
  const answer = await res.json();
  if (res.status !== 201) throw new Error(`POST /broadcasts: ${res.status} ${JSON.stringify(answer)}`);
  return answer.id;
}

/** Recipients of the broadcast's emails not delivered yet. */
const undelivered = async (broadcastId: string) =>
  Number(
    (
      await w.p
        .db('email_recipients as r')
        .join('emails as e', 'e.id', 'r.email_id')
        .where('e.broadcast_id', broadcastId)
        .whereNot('r.status', 'delivered')
        .count({ n: '*' })
        .first()
    )?.n,
  );

const copiesTo = (address: string) => [...w.sink.deliveredTo(address), ...slow.deliveredTo(address)];

/**
 * What a killed mta had in flight, read as process-kills.test.ts reads it: the broadcast's recipients leased and not
 * recorded delivered, and the addresses at the sinks. Only an address in both may get a second copy (the sink's 250
 * came, the record did not). Read once the sinks have settled: every connection of the dead process closed, and no
 * message read to its final dot still waiting for its answer (the slow sink answers 400 ms later and keeps it even
 * though the client is gone, as a real MX does).
 */
async function inFlightAtKill(broadcastId: string) {
  // 30 s: a CI run on two busy cores timed out at the default 10 s; the sinks' counters name what was left.
  await until(() => [w.sink, slow].every((s) => s.stats.open === 0 && s.stats.pending === 0), {
    what: 'the sinks settled after the kill',
    timeoutMs: 30_000,
  }).catch((err: Error) => {
    throw new Error(`${err.message}; sinks: ${JSON.stringify([w.sink.stats, slow.stats])}`);
  });
  const lower = (a: string) => a.toLowerCase();
  const leased: string[] = await w.p
    .db('email_recipients as r')
    .join('emails as e', 'e.id', 'r.email_id')
    .where('e.broadcast_id', broadcastId)
    .whereNotNull('r.leased_until')
    .whereNot('r.status', 'delivered')
    .pluck('r.address');
  const atSink = [...w.sink.messages, ...slow.messages].flatMap((m) => m.to);
  return { leased: new Set(leased.map(lower)), atSink: new Set(atSink.map(lower)) };
}

test.serial(
  'api, worker and mta deliver a broadcast to several domains, one slow, one address deferred once',
  async (t) => {
    t.timeout(240_000);
    const { team, from, segment, rows } = await world('bp', 12);
    const deferred = rows[1].email;
    w.sink.script(deferred, { rcpt: '451 4.7.1 Greylisted, try again' });
    const { url } = await startApi();
    const worker = startWorker(url, 5);
    const mta = startMta(url);
    const id = await createAndSend(url, team.key, {
      segment_id: segment,
      from,
      subject: 'Hello {{{FIRST_NAME|there}}}',
      html: '<p>Dear {{{FIRST_NAME|reader}}},</p><p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
    });
    // Everyone but the greylisted address is delivered; it is deferred on the retry schedule.
    await until(
      async () => (await undelivered(id)) === 1 && (await w.p.db('broadcasts').where({ id }).first()).status,
      {
        what: 'all but one delivered',
        timeoutMs: 150_000,
        intervalMs: 200,
      },
    );
    const held = await w.p.db('email_recipients').where({ address: deferred }).first();
    t.is(held.status, 'deferred');
    // The greylist lifts; the retry comes due now instead of in a minute, and the mta's sweep takes it.
    w.sink.script(deferred, {});
    await w.p.db('email_recipients').where({ id: held.id }).update({ next_attempt_at: new Date() });
    await until(async () => (await undelivered(id)) === 0, {
      what: 'all delivered',
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    t.is((await w.p.db('broadcasts').where({ id }).first()).status, 'sent');

    for (const r of rows) {
      const copies = copiesTo(r.email);
      t.is(copies.length, 1, r.email);
      const mail = await simpleParser(copies[0].raw);
      t.deepEqual(copies[0].to, [r.email]);
      t.is(mail.subject, `Hello ${r.first_name}`);
      t.regex(String(mail.html), new RegExp(`Dear ${r.first_name},`));
      t.deepEqual(
        (await w.verifyDkim(copies[0].raw)).map((d) => d.status),
        ['pass'],
        r.email,
      );
      t.true(String(mail.html).includes(unsubscribeUrl(copies[0].raw)!), 'the body links the same one-click URL');
    }
    t.true(slow.messages.length >= 4, 'the slow domain went to its own MX');

    // The one-click of one copy, posted as a mailbox provider does (RFC 8058), reaches the api process.
    const url0 = unsubscribeUrl(copiesTo(rows[0].email)[0].raw)!;
    t.true(url0.startsWith(`${url}/unsubscribe/`));
    const click = await fetch(`${url}/unsubscribe/${tokenOf(url0)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    t.is(click.status, 200);
    t.true((await w.p.db('contacts').where({ id: rows[0].id }).first()).unsubscribed);
    worker.kill('SIGTERM');
    mta.kill('SIGTERM');
    await Promise.all([exited(worker), exited(mta)]);
  },
);

test.serial(
  'SIGKILL of the worker (twice) and the mta mid-broadcast: it resumes and nobody gets a second email',
  async (t) => {
    t.timeout(300_000);
    const n = 240;
    const { team, from, segment, rows } = await world('bk', n);
    const { api, url } = await startApi();
    let worker = startWorker(url, 10);
    let mta = startMta(url);
    const id = await createAndSend(url, team.key, {
      segment_id: segment,
      from,
      subject: 'Hi {{{FIRST_NAME}}}',
      html: '<p>Hi {{{FIRST_NAME}}}</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>',
    });
    api.kill('SIGKILL');
    const progress = async () => (await w.p.db('broadcasts').where({ id }).first()).recipients_count as number;
    for (const at of [30, 90]) {
      await until(async () => (await progress()) >= at, {
        what: `${at} recipients`,
        timeoutMs: 120_000,
        intervalMs: 50,
      });
      worker.kill('SIGKILL');
      await exited(worker);
      worker = startWorker(url, 10);
    }
    await until(() => w.sink.messages.length + slow.messages.length >= 20, {
      what: '20 delivered',
      timeoutMs: 120_000,
    });
    mta.kill('SIGKILL');
    await exited(mta);
    const atKill = await inFlightAtKill(id);
    mta = startMta(url);
    await until(async () => (await w.p.db('broadcasts').where({ id }).first()).status === 'sent', {
      what: 'the broadcast sent',
      timeoutMs: 150_000,
      intervalMs: 200,
    });
    try {
      await until(async () => (await undelivered(id)) === 0, {
        what: 'all delivered',
        timeoutMs: 150_000,
        intervalMs: 200,
      });
    } finally {
      // What is left, should the wait fail: by status, attempts and whether a lease or a retry holds it.
      const left = await w.p
        .db('email_recipients as r')
        .join('emails as e', 'e.id', 'r.email_id')
        .where('e.broadcast_id', id)
        .whereNot('r.status', 'delivered')
        .select('r.status', 'r.attempts', 'r.leased_until', 'r.next_attempt_at', 'r.last_response', 'e.status as email')
        .limit(5);
      if (left.length) t.log(left);
    }

    const emails = await w.p.db('emails').where({ broadcast_id: id }).select('id', 'to');
    t.is(emails.length, n, 'one email per member, however often the fan-out was killed');
    t.is(new Set(emails.map((e) => e.to[0])).size, n);
    const b = await w.p.db('broadcasts').where({ id }).first();
    t.is(b.recipients_count, n);
    // Every member got exactly one copy, but those the mta had in flight at the kill, which got at most two (the same
    // email: the same Message-ID); and no more of those than its bulk slots could hold.
    const wrong: string[] = [];
    let duplicates = 0;
    for (const r of rows) {
      const copies = copiesTo(r.email);
      const address = r.email.toLowerCase();
      const inFlight = atKill.leased.has(address) && atKill.atSink.has(address);
      if (copies.length < 1 || copies.length > (inFlight ? 2 : 1)) wrong.push(`${r.email}: ${copies.length}`);
      duplicates += Math.max(0, copies.length - 1);
      t.is(new Set(copies.map((c) => /^Message-ID: (.*)\r$/m.exec(c.raw.toString())?.[1])).size, 1, r.email);
    }
    t.deepEqual(wrong, [], 'one copy each; two only for a copy in flight (leased, already at the sink) at the kill');
    t.true(
      duplicates <= Math.min(atKill.leased.size, MTA_BULK_CONCURRENCY),
      `${duplicates} second copies; ${atKill.leased.size} leased at the kill`,
    );
    t.log(
      `at the mta kill: ${atKill.atSink.size} at the sinks, ${atKill.leased.size} leased undelivered; second copies: ${duplicates}`,
    );
    worker.kill('SIGTERM');
    mta.kill('SIGTERM');
    await Promise.all([exited(worker), exited(mta)]);
  },
);

test.serial('a scheduled broadcast waits for its time, then the running worker sends it', async (t) => {
  t.timeout(240_000);
  const { team, from, segment, rows } = await world('bs', 6);
  const worker = startEntry('worker/main.ts', w.p.config, { PUBLIC_BASE_URL: w.p.url, BROADCAST_BATCH_SIZE: '4' });
  entries.push(worker);
  const mta = startMta(w.p.url);
  // Generous: on a loaded machine the child's start (tsx) alone can take many seconds.
  await worker.logged('worker.started', 120_000);

  const made = await w.p.request('POST', '/broadcasts', {
    key: team.key,
    body: {
      segment_id: segment,
      from,
      subject: 'Later, {{{FIRST_NAME}}}',
      html: '<p>Later</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>',
      send: true,
      scheduled_at: 'in 4 seconds',
    },
  });
  t.is(made.status, 201, made.text);
  const id = made.body.id;
  const get = async () => (await w.p.request('GET', `/broadcasts/${id}`, { key: team.key })).body;
  const scheduled = await get();
  t.like(scheduled, { status: 'scheduled', counts: { recipients: 0 } });
  const due = Date.parse(scheduled.scheduled_at);
  t.true(Math.abs(due - Date.now() - 4000) < 3000, 'about 4 s ahead');

  // The worker's sweep (every second) passes it by until its time, then a fan-out takes it.
  await until(async () => (await get()).status === 'sent', {
    what: 'the scheduled broadcast sent',
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  const b = await w.p.db('broadcasts').where({ id }).first();
  const late = b.started_at.getTime() - due;
  t.log(`the fan-out started ${late} ms after scheduled_at`);
  t.true(late >= 0, `started ${late} ms after its time: never before`);
  t.true(late <= 5000, `started ${late} ms after its time`);
  t.like(await get(), { status: 'sent', counts: { recipients: rows.length } });

  await until(async () => (await undelivered(id)) === 0, { what: 'all delivered', timeoutMs: 60_000, intervalMs: 200 });
  for (const r of rows) {
    const copies = copiesTo(r.email);
    t.is(copies.length, 1, r.email);
    t.is((await simpleParser(copies[0].raw)).subject, `Later, ${r.first_name}`);
  }
  mta.kill('SIGTERM');
  await Promise.all([worker.stop(), exited(mta)]);
});
