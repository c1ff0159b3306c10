// Our side of the sending suite (bench/sending.ts): the real api (api/main.ts) and the real mta (mta/main.ts),
// each its own process, on a fresh database and Redis prefix, resolving through a loopback DNS server in the
// bench process (the sending domain's records, the recipient domain's MX → 127.0.0.1) and delivering to the
// sink's port. The accept loads: autocannon POSTing to /emails, and SMTP submission (bench/smtp-submit-client.ts,
// or nodemailer).
import { ANALYZE_EVERY_MS, analyzeChangedTables, autovacuumOn } from '../shared/db/autovacuum.ts';
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import nodemailer from 'nodemailer';
import { loadConfig, type Config } from '../shared/config.ts';
import { createDb, type Db } from '../shared/db/knex.ts';
import { createRedis } from '../shared/redis.ts';
import { createTeamWithKey } from '../shared/cli/commands.ts';
import { liftSandbox, setRateLimit } from '../shared/teams/teams.ts';
import { checkDomain } from '../shared/domains/verify.ts';
import { createResolver } from '../shared/dns/resolver.ts';
import { createTestDatabase } from '../test/helpers/db.ts';
import { startDnsServer, type DnsServer } from '../test/helpers/dns-server.ts';
import { spawnMta, startServer, type ChildServer } from './servers.ts';
import { USER_AGENT } from './load.ts';
import { freePort } from './sending-peers.ts';
import { paced, percentile } from './paced.ts';
import { openSubmitSession, submitMessage } from './smtp-submit-client.ts';

// Under .test (RFC 2606), which the bench's platform takes as an ordinary TLD (RESERVED_TLDS_ALLOWED below).
export const SENDER_DOMAIN = 'bench-sender.test';
export const RECIPIENT_DOMAIN = 'sink.bench-recipient.test';

export interface OursOptions {
  sinkPort: number;
  redisUrl: string;
  mtaConcurrency: number;
  maxPerDestination: number;
  onCleanup(step: () => Promise<unknown>): void;
  /** More environment for the api and mta (bench/sending-profile.ts: NODE_OPTIONS=--cpu-prof). */
  extraEnv?: Record<string, string>;
  /**
   * Whether the bench does the worker's analyze (shared/db/autovacuum.ts) on a server without autovacuum, as the
   * platform's worker would: true unless the bench runs a worker of its own (bench/broadcasts.ts).
   */
  analyze?: boolean;
}

export interface Ours {
  api: ChildServer;
  mta: { pid: number; stop(): Promise<void> };
  db: Db;
  /** The database's URL (its name tells its PostgreSQL backends apart). */
  databaseUrl: string;
  key: string;
  submissionPort: number;
  /** The loopback DNS server the api and mta resolve through (bench/tracking.ts adds a domain of its own). */
  dns: DnsServer;
  /** email_recipients by status. */
  recipients(): Promise<Record<string, number>>;
  /** The environment the api and mta run with (bench/broadcasts.ts starts a worker with it). */
  env: Record<string, string>;
}

/** A 10 KB text body (76-character lines, as a mail client wraps them), different per message by its first line. */
export function body(bytes: number, tag: string): string {
  const line = 'The quick brown fox jumps over the lazy dog and the benchmark keeps typing.\n';
  return `${tag}\n${line.repeat(Math.ceil(bytes / line.length))}`.slice(0, bytes);
}

export async function startOurs(o: OursOptions): Promise<Ours> {
  const database = await createTestDatabase();
  o.onCleanup(() => database.drop());
  const blobDir = await mkdtemp(path.join(tmpdir(), 'pw-bench-send-'));
  o.onCleanup(() => rm(blobDir, { recursive: true, force: true }));
  const dns = await startDnsServer();
  o.onCleanup(() => dns.close());
  const redisPrefix = `pwbench-send-${randomBytes(5).toString('hex')}`;
  o.onCleanup(async () => {
    const redis = createRedis({ REDIS_URL: o.redisUrl });
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    await redis.quit();
  });
  const submissionPort = await freePort();
  const env = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'error',
    HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    REDIS_URL: o.redisUrl,
    REDIS_PREFIX: redisPrefix,
    BLOB_DIR: blobDir,
    RATE_LIMIT_RPS: '100000',
    SECRETS_KEY: randomBytes(32).toString('base64'),
    DNS_SERVERS: dns.address,
    SMTP_DELIVERY_PORT: String(o.sinkPort),
    SMTP_HOST: '127.0.0.1',
    SMTP_SUBMISSION_PORT: String(submissionPort),
    SMTP_SUBMISSION_TLS_PORT: String(await freePort()),
    MTA_CONCURRENCY: String(o.mtaConcurrency),
    MTA_MAX_PER_DESTINATION: String(o.maxPerDestination),
    // Each message is distinct (its subject), so the bulk rule never applies; this only keeps it out of the way.
    BULK_DAILY_LIMIT: '100000000',
    // The bench's names are under .test (RFC 2606): the platform takes them as ordinary domains.
    RESERVED_TLDS_ALLOWED: 'test',
    ...o.extraEnv,
  };
  const config = loadConfig(env);
  const db = createDb(config, { min: 0, max: 4 });
  o.onCleanup(() => db.destroy());
  if (o.analyze !== false && !(await autovacuumOn(db))) {
    // The platform's worker analyzes the tables that change on such a server; this bench runs no worker.
    const timer = setInterval(() => void analyzeChangedTables(db).catch(() => undefined), ANALYZE_EVERY_MS);
    o.onCleanup(async () => clearInterval(timer));
  }

  const api = await startServer('api (sending)', 'api/main.ts', env);
  o.onCleanup(() => api.stop());
  const key = await readySender({ db, config, dns, apiUrl: api.url, teamName: 'Bench sending' });

  const mta = await spawnMta(env, submissionPort, o.onCleanup);

  return {
    api,
    mta,
    db,
    key,
    submissionPort,
    dns,
    databaseUrl: database.url,
    env,
    async recipients() {
      const rows = (await db('email_recipients').select('status').count({ n: '*' }).groupBy('status')) as {
        status: string;
        n: string;
      }[];
      return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    },
  };
}

/**
 * A team out of the sandbox with its rate limit far above the load, SENDER_DOMAIN created through the api and
 * verified for real against the loopback DNS server, and RECIPIENT_DOMAIN's MX pointing at 127.0.0.1. Answers
 * the team's key.
 */
export async function readySender(o: {
  db: Db;
  config: Config;
  dns: DnsServer;
  apiUrl: string;
  teamName: string;
}): Promise<string> {
  const { db, dns } = o;
  const { team, api_key: key } = await createTeamWithKey(db, o.teamName);
  await setRateLimit(db, team.id, 100_000);
  await liftSandbox(db, team.id, 'us-east-1');
  const res = await fetch(`${o.apiUrl}/domains`, {
    method: 'POST',
    headers: { 'user-agent': USER_AGENT, authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: SENDER_DOMAIN, region: 'us-east-1' }),
  });
  const domain = (await res.json()) as {
    id: string;
    records: { type: string; name: string; value: string; priority?: number }[];
  };
  if (res.status !== 201) throw new Error(`POST /domains answered ${res.status}: ${JSON.stringify(domain)}`);
  for (const r of domain.records) {
    const name = r.name === '@' ? SENDER_DOMAIN : `${r.name}.${SENDER_DOMAIN}`;
    if (r.type === 'MX') dns.set(name, 'MX', [{ exchange: r.value, priority: r.priority ?? 10 }]);
    else if (r.type === 'TXT') dns.set(name, 'TXT', [r.value]);
  }
  const checked = await checkDomain(db, createResolver({ servers: [dns.address] }), o.config, domain.id);
  if (checked?.status !== 'verified') throw new Error(`${SENDER_DOMAIN} did not verify: ${checked?.status}`);
  dns.set(RECIPIENT_DOMAIN, 'MX', [{ exchange: `mx.${RECIPIENT_DOMAIN}`, priority: 10 }]);
  dns.set(`mx.${RECIPIENT_DOMAIN}`, 'A', ['127.0.0.1']);
  return key;
}

export interface AcceptResult {
  sent: number;
  ok: number;
  failed: number;
  wallMs: number;
  /** First request sent, performance.now(). */
  startedAt: number;
  rate: number;
  p50: number;
  p99: number;
  /** Paced runs: each answered request's due time and latency, and how late the client itself sent (sorted). */
  spans?: { due: number; ms: number }[];
  late?: number[];
}

/** POST /emails `n` times on `connections` keep-alive connections, as fast as it goes or at `rate` per second. */
export async function apiAccept(
  ours: Ours,
  n: number,
  connections: number,
  bytes: number,
  rate?: number,
): Promise<AcceptResult> {
  const tag = randomBytes(4).toString('hex');
  const text = body(bytes, tag);
  let i = 0;
  const options = {
    url: `${ours.api.url}/emails`,
    connections,
    amount: n,
    timeout: 30,
    ...(rate ? { overallRate: rate } : {}),
    // A different subject per request: distinct messages, as real traffic is, rather than one content hash whose
    // bulk_counters row every accepting transaction would update (and wait on).
    requests: [
      {
        method: 'POST',
        headers: { 'user-agent': USER_AGENT, authorization: `Bearer ${ours.key}`, 'content-type': 'application/json' },
        setupRequest: (req: Record<string, unknown>) => ({
          ...req,
          body: JSON.stringify({
            from: `Bench <bench@${SENDER_DOMAIN}>`,
            to: [`user-${tag}@${RECIPIENT_DOMAIN}`],
            subject: `Bench ${tag} ${i++}`,
            text,
          }),
        }),
      },
    ],
  };
  const startedAt = performance.now();
  // To the last answer: autocannon resolves at its next whole second (until 2026-12-04, 2,000 took 3 or 4 s here).
  let lastAnswerAt = startedAt;
  const instance = autocannon(options).on('response', () => (lastAnswerAt = performance.now()));
  const r = await instance;
  const wallMs = lastAnswerAt - startedAt;
  return {
    sent: n,
    ok: r['2xx'],
    failed: r.non2xx + r.errors,
    wallMs,
    startedAt,
    rate: r['2xx'] / (wallMs / 1000),
    p50: r.latency.p50,
    p99: r.latency.p99,
  };
}

/** POST /emails `n` times at a steady `rate` per second, open loop (bench/paced.ts). */
export async function apiPaced(ours: Ours, n: number, rate: number, bytes: number): Promise<AcceptResult> {
  const tag = randomBytes(4).toString('hex');
  const text = body(bytes, tag);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 100 });
  const url = new URL(`${ours.api.url}/emails`);
  const post = (i: number) =>
    new Promise<number>((resolve) => {
      const payload = JSON.stringify({
        from: `Bench <bench@${SENDER_DOMAIN}>`,
        to: [`user-${tag}@${RECIPIENT_DOMAIN}`],
        subject: `Bench ${tag} ${i}`,
        text,
      });
      const req = http.request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: {
            'user-agent': USER_AGENT,
            authorization: `Bearer ${ours.key}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', () => resolve(0));
      req.end(payload);
    });
  const { ms, late, spans, failed, startedAt, wallMs } = await paced(n, rate, async (i) => (await post(i)) === 200);
  agent.destroy();
  return { ...accepted(n, ms, failed, wallMs, startedAt), spans, late };
}

/**
 * `n` messages over SMTP submission: `connections` STARTTLS sessions, AUTH as apikey, one message per session at a
 * time. The client is bench/smtp-submit-client.ts (messages made ahead, as smtp-source does for Postfix) unless
 * BENCH_SMTP_CLIENT=nodemailer asks for a pooled nodemailer transport (each message composed while measured).
 */
export async function smtpAccept(ours: Ours, n: number, connections: number, bytes: number): Promise<AcceptResult> {
  if (process.env.BENCH_SMTP_CLIENT === 'nodemailer') return nodemailerAccept(ours, n, connections, bytes);
  const tag = randomBytes(4).toString('hex');
  const from = `bench@${SENDER_DOMAIN}`;
  const text = body(bytes, tag);
  const messages = Array.from({ length: n }, (_, i) => {
    const to = `user-${tag}-${i}@${RECIPIENT_DOMAIN}`;
    return { to, bytes: submitMessage(from, to, `Bench ${tag} ${i}`, text, `${tag}-${i}@${SENDER_DOMAIN}`) };
  });
  const lanes = Math.min(connections, n);
  const sessions = await Promise.all(
    Array.from({ length: lanes }, () => openSubmitSession(ours.submissionPort, 'apikey', ours.key)),
  );
  const ms: number[] = [];
  let next = 0;
  let failed = 0;
  let firstError: unknown;
  const startedAt = performance.now();
  await Promise.all(
    sessions.map(async (session) => {
      while (next < n) {
        const m = messages[next++];
        const t0 = performance.now();
        try {
          await session.send(from, m.to, m.bytes);
          ms.push(performance.now() - t0);
        } catch (err) {
          failed++;
          firstError ??= err;
          return; // the session's replies are out of step now: it stops, the others go on
        }
      }
    }),
  );
  const wallMs = performance.now() - startedAt;
  await Promise.all(sessions.map((s) => s.close()));
  if (firstError)
    console.error(`bench: sending: SMTP submission: ${failed} failed, the first: ${(firstError as Error).message}`);
  return accepted(n, ms, failed, wallMs, startedAt);
}

function accepted(n: number, ms: number[], failed: number, wallMs: number, startedAt: number): AcceptResult {
  ms.sort((a, b) => a - b);
  return {
    sent: n,
    ok: ms.length,
    failed,
    wallMs,
    startedAt,
    rate: ms.length / (wallMs / 1000),
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
  };
}

async function nodemailerAccept(ours: Ours, n: number, connections: number, bytes: number): Promise<AcceptResult> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: ours.submissionPort,
    secure: false,
    requireTLS: true,
    pool: true,
    maxConnections: connections,
    maxMessages: Infinity,
    tls: { rejectUnauthorized: false },
    auth: { user: 'apikey', pass: ours.key },
  });
  const tag = randomBytes(4).toString('hex');
  const text = body(bytes, tag);
  const ms: number[] = [];
  let next = 0;
  let failed = 0;
  let firstError: unknown;
  const startedAt = performance.now();
  const lane = async () => {
    while (next < n) {
      const i = next++;
      const t0 = performance.now();
      try {
        await transport.sendMail({
          from: `Bench <bench@${SENDER_DOMAIN}>`,
          to: `user-${tag}-${i}@${RECIPIENT_DOMAIN}`,
          subject: `Bench ${tag} ${i}`,
          text,
        });
        ms.push(performance.now() - t0);
      } catch (err) {
        failed++;
        firstError ??= err;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(connections, n) }, lane));
  } finally {
    transport.close();
  }
  const wallMs = performance.now() - startedAt;
  if (firstError)
    console.error(`bench: sending: SMTP submission: ${failed} failed, the first: ${(firstError as Error).message}`);
  return accepted(n, ms, failed, wallMs, startedAt);
}
