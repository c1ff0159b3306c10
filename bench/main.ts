// `npm run bench`: our api under load next to a bare Koa server, on this machine, in one run (see bench/README.md).
// Setup mirrors test/helpers/platform.ts (a fresh migrated database, a unique Redis prefix, a team and key made
// by the operator command), but the api is the real entry point api/main.ts in its own process.
import { envNumber } from './env.ts'; // first: the configuration, before any helper reads it
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createDb } from '../shared/db/knex.ts';
import { configSchema } from '../shared/config.ts';
import { createRedis } from '../shared/redis.ts';
import { createTeamWithKey } from '../shared/cli/commands.ts';
import { setRateLimit } from '../shared/teams/teams.ts';
import { createTestDatabase } from '../test/helpers/db.ts';
import { startServer, stopAllServers } from './servers.ts';
import { measure, type LoadOptions, type Measurement, type Target } from './load.ts';
import { fixed, renderTable } from './table.ts';
import { runDomainBench } from './domains.ts';
import { runSendingBench } from './sending.ts';
import { runScaleoutBench, scaleoutOptions } from './scaleout.ts';
import { runInboundBench } from './inbound.ts';
import { runWebhookBench } from './webhooks.ts';
import { runImportBench } from './imports.ts';
import { runSegmentBench } from './segments.ts';
import { runTemplateBench } from './templates.ts';
import { runAccountsBench } from './accounts.ts';
import { runTrackingBench } from './tracking.ts';
import { runDashboardBench } from './dashboard.ts';
import { runOAuthBench } from './oauth.ts';
import { runBroadcastBench } from './broadcasts.ts';

const load: LoadOptions = {
  seconds: envNumber('BENCH_SECONDS', 8, 1),
  warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 2, 0),
  connections: envNumber('BENCH_CONNECTIONS', 32, 1),
};
// Far above anything two cores can serve, so the limiter does its Redis round trip but never answers 429.
const RATE_LIMIT = 100_000;
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const redisPrefix = `pwbench-${randomBytes(5).toString('hex')}`;

// Cleanup runs once, from the finally below or from a signal, whichever comes first; each step is independent
// so one failing (say Redis down) does not leave the database behind.
const undo: Array<() => Promise<unknown>> = [];
let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await stopAllServers();
    for (const step of undo.reverse()) {
      await step().catch((err) => console.error(`bench: cleanup step failed: ${(err as Error).message}`));
    }
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`bench: ${signal}, cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

async function setup() {
  const database = await createTestDatabase();
  undo.push(() => database.drop());
  const blobDir = await mkdtemp(path.join(tmpdir(), 'pw-bench-blobs-'));
  undo.push(() => rm(blobDir, { recursive: true, force: true }));
  const redis = createRedis({ REDIS_URL: redisUrl });
  undo.push(async () => {
    // Only the rate limiter writes keys during the run; they expire in 2 s, but leave nothing behind anyway.
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}:*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    await redis.quit();
  });

  const db = createDb({ DATABASE_URL: database.url }, { min: 0, max: 1 });
  try {
    const created = await createTeamWithKey(db, 'Bench team');
    await setRateLimit(db, created.team.id, RATE_LIMIT);
    return { databaseUrl: database.url, blobDir, key: created.api_key };
  } finally {
    await db.destroy();
  }
}

/** Fills `results` as it goes, so a failure in a later target still leaves the earlier ones to print. */
async function run(results: Measurement[]): Promise<void> {
  const { databaseUrl, blobDir, key } = await setup();
  const bare = await startServer('bare koa', 'bench/serve-bare.ts', { NODE_ENV: 'production' });
  // Under tsx as the bare app is (a bench file has no build): the ratio between them is the cost of our code.
  const api = await startServer(
    'api',
    'api/main.ts',
    {
      NODE_ENV: 'production',
      LOG_LEVEL: 'silent',
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: redisPrefix,
      BLOB_DIR: blobDir,
      RATE_LIMIT_RPS: String(RATE_LIMIT),
      // The bench's names are under .test (RFC 2606): the platform takes them as ordinary domains.
      RESERVED_TLDS_ALLOWED: 'test',
    },
    { sources: true },
  );

  const isObject = (b: unknown): b is Record<string, unknown> => typeof b === 'object' && b !== null;
  const targets: Target[] = [
    {
      name: 'bare koa  GET /',
      server: bare,
      path: '/',
      expectStatus: 200,
      checkBody: (b) => (isObject(b) && b.ok === true ? undefined : 'expected {"ok":true}'),
      alone: true,
    },
    {
      name: 'api  GET /does-not-exist',
      server: api,
      path: '/does-not-exist',
      expectStatus: 404,
      checkBody: (b) => (isObject(b) && b.name === 'not_found' ? undefined : 'expected a not_found error'),
      alone: true,
    },
    {
      name: 'api  GET /api-keys (Bearer)',
      server: api,
      path: '/api-keys',
      headers: { authorization: `Bearer ${key}` },
      expectStatus: 200,
      checkBody: (b) =>
        isObject(b) && b.object === 'list' && Array.isArray(b.data) && b.data.length === 1
          ? undefined
          : 'expected a list of one key',
      alone: false,
    },
  ];
  // One at a time: each target has the machine to itself (apart from PostgreSQL and Redis, idle for the others).
  for (const t of targets) {
    console.error(`bench: ${t.name}: ${load.warmupSeconds} s warm-up, ${load.seconds} s measured`);
    results.push(await measure(t, load));
  }
}

function report(results: Measurement[]): boolean {
  const ceiling = results[0].rps;
  const total = (r: Measurement) => Object.values(r.unexpected).reduce((a, b) => a + b, 0);
  console.log(
    `node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown cpu'}); autocannon ${load.connections} connections, ${load.warmupSeconds} s warm-up + ${load.seconds} s per target`,
  );
  console.log('');
  console.log(
    renderTable(
      [
        'target',
        'requests',
        'req/s',
        'p50 ms',
        'p99 ms',
        'vs ceiling',
        'server peak RSS MB',
        'server CPU %',
        'client CPU %',
        'machine CPU %',
        'unexpected',
        'errors',
      ],
      results.map((r) => [
        r.name,
        r.requests,
        fixed(r.rps, 0),
        fixed(r.p50, 0),
        fixed(r.p99, 0),
        fixed(r.rps / ceiling, 2),
        fixed(r.peakRssMb, 1),
        fixed(r.serverCpuPercent, 0),
        fixed(r.clientCpuPercent, 0),
        fixed(r.machineCpuPercent, 0),
        total(r),
        r.errors,
      ]),
    ),
  );
  console.log('');
  console.log(
    `vs ceiling = req/s / the bare koa req/s. CPU % is of one core (this machine has ${cpus().length * 100} %); machine = every`,
  );
  console.log(
    'process, PostgreSQL and Redis included. unexpected = responses (warm-up included) with another status than',
  );
  console.log('the target expects; errors = requests with no response (socket error, timeout).');
  // A target that needs neither PostgreSQL nor Redis involves only its server and autocannon: CPU used beyond
  // theirs belongs to something else on the machine, which pushed that target's numbers (or the ceiling every
  // ratio is measured against) down. Targets that use the database cannot be checked this way.
  for (const r of results) {
    const others = (r.machineCpuPercent ?? 0) - (r.serverCpuPercent ?? 0) - r.clientCpuPercent;
    if (!r.alone || r.machineCpuPercent === undefined || others <= 25) continue;
    console.log(
      `WARNING ${r.name}: other processes used ~${others.toFixed(0)} % CPU during the run; the machine was not`,
    );
    console.log('quiet, so this row is not comparable with a quiet run.');
  }
  let ok = true;
  for (const r of results) {
    if (total(r) === 0 && r.errors === 0 && !r.afterCheck) continue;
    ok = false;
    const statuses =
      Object.entries(r.unexpected)
        .map(([s, n]) => `${s} x${n}`)
        .join(', ') || 'none';
    console.log(`FAIL ${r.name}: unexpected statuses: ${statuses}; errors: ${r.errors}`);
    if (r.afterCheck) console.log(`FAIL ${r.name}: the request after the load: ${r.afterCheck}`);
  }
  return ok;
}

const results: Measurement[] = [];
let exitCode = 1;
// BENCH_ONLY=sending (or inbound, webhooks, segments, templates, accounts, tracking, broadcasts, imports, scaleout)
// runs that suite alone.
const only = process.env.BENCH_ONLY;
try {
  exitCode = 0;
  if (only === undefined || only === '') {
    await run(results);
    exitCode = report(results) ? 0 : 1;
    // The domains suite (bench/domains.ts), on a database and api process of its own.
    const domainsOk = await runDomainBench({
      creations: envNumber('BENCH_DOMAINS', 50, 1),
      verifications: envNumber('BENCH_VERIFY_DOMAINS', 200, 1),
      redisUrl,
      onCleanup: (step) => undo.push(step),
    }).catch((err) => {
      console.error(`bench: domains: ${(err as Error).stack ?? err}`);
      return false;
    });
    if (!domainsOk) exitCode = 1;
  }
  // The sending suite (bench/sending.ts): its own sink, Postfix instance, database, api and mta. Its targets print
  // PASS/FAIL without failing the run; only a suite that could not run does.
  if (!only || only === 'sending')
    await runSendingBench({
      messages: envNumber('BENCH_SEND_MESSAGES', 2000, 1),
      rate: envNumber('BENCH_SEND_RATE', 200, 1),
      rateSeconds: envNumber('BENCH_SEND_RATE_SECONDS', 10, 1),
      sessions: envNumber('BENCH_SEND_SESSIONS', 20, 1),
      bytes: envNumber('BENCH_SEND_BYTES', 10240, 1),
      drainSeconds: envNumber('BENCH_SEND_DRAIN_SECONDS', 120, 1),
      mtaConcurrency: envNumber('BENCH_MTA_CONCURRENCY', configSchema.shape.MTA_CONCURRENCY.parse(undefined), 1),
      maxPerDestination: envNumber('BENCH_MTA_MAX_PER_DESTINATION', 20, 1),
      rounds: envNumber('BENCH_SEND_ROUNDS', 3, 1),
      redisUrl,
      onCleanup: (step) => undo.push(step),
    }).catch((err) => {
      console.error(`bench: sending: ${(err as Error).stack ?? err}`);
      exitCode = 1;
    });
  // The scale-out suite (bench/scaleout.ts): one, then two mta copies on one database; only when asked for.
  if (only === 'scaleout' && !(await runScaleoutBench(scaleoutOptions(envNumber, redisUrl, undo)))) exitCode = 1;
  // The inbound suite (bench/inbound.ts): Postfix and our MX accepting the same smtp-source streams; PASS/FAIL lines.
  if (!only || only === 'inbound')
    await runInboundBench({
      messages: envNumber('BENCH_INBOUND_MESSAGES', 2000, 1),
      bigMessages: envNumber('BENCH_INBOUND_BIG_MESSAGES', 200, 1),
      latencyMessages: envNumber('BENCH_INBOUND_LATENCY_MESSAGES', 400, 1),
      sessions: envNumber('BENCH_INBOUND_SESSIONS', 20, 1),
      drainSeconds: envNumber('BENCH_INBOUND_DRAIN_SECONDS', 120, 1),
      redisUrl,
      onCleanup: (step) => undo.push(step),
    }).catch((err) => {
      console.error(`bench: inbound: ${(err as Error).stack ?? err}`);
      exitCode = 1;
    });
  // The webhooks suite (bench/webhooks.ts): the real worker delivering to a loopback receiver; PASS/FAIL lines.
  if (!only || only === 'webhooks')
    await runWebhookBench({
      events: envNumber('BENCH_HOOK_EVENTS', 20000, 1),
      endpoints: envNumber('BENCH_HOOK_ENDPOINTS', 16, 1),
      singleEvents: envNumber('BENCH_HOOK_SINGLE_EVENTS', 3000, 1),
      rate: envNumber('BENCH_HOOK_RATE', 500, 1),
      rateSeconds: envNumber('BENCH_HOOK_RATE_SECONDS', 5, 1),
      emails: envNumber('BENCH_HOOK_EMAILS', 200, 1),
      emailRate: envNumber('BENCH_HOOK_EMAIL_RATE', 20, 1),
      drainSeconds: envNumber('BENCH_HOOK_DRAIN_SECONDS', 120, 1),
      redisUrl,
      onCleanup: (step) => undo.push(step),
    }).catch((err) => {
      console.error(`bench: webhooks: ${(err as Error).stack ?? err}`);
      exitCode = 1;
    });
  // The segments suite (bench/segments.ts): a million contacts on a database of its own, filter segments counted
  // and listed through the api process; PASS/FAIL lines.
  if (!only || only === 'segments')
    await runSegmentBench({
      contacts: envNumber('BENCH_SEGMENT_CONTACTS', 1_000_000, 1000),
      runs: envNumber('BENCH_SEGMENT_RUNS', 7, 1),
      redisUrl,
      onCleanup: (step) => undo.push(step),
    }).catch((err) => {
      console.error(`bench: segments: ${(err as Error).stack ?? err}`);
      exitCode = 1;
    });
  // The templates suite (bench/templates.ts): renders/s of a published template on this process's one thread.
  if (!only || only === 'templates')
    await runTemplateBench({
      seconds: envNumber('BENCH_TEMPLATE_SECONDS', 5, 1),
      onCleanup: (step) => undo.push(step),
    }).catch((err) => {
      console.error(`bench: templates: ${(err as Error).stack ?? err}`);
      exitCode = 1;
    });
  // The accounts suite (bench/accounts.ts): sign-in cost, the other session routes at 100/s; PASS/FAIL lines.
  if (!only || only === 'accounts')
    await runAccountsBench({
      logins: envNumber('BENCH_ACCOUNT_LOGINS', 100, 1),
      rate: envNumber('BENCH_ACCOUNT_RATE', 100, 1),
      seconds: envNumber('BENCH_ACCOUNT_SECONDS', 10, 1),
      redisUrl,
      onCleanup: (step) => undo.push(step),
    }).catch((err) => {
      console.error(`bench: accounts: ${(err as Error).stack ?? err}`);
      exitCode = 1;
    });
  // The dashboard suite (bench/dashboard.ts): Chromium on the built dashboard over 100,000 contacts; PASS/FAIL lines.
  if (!only || only === 'dashboard')
    await runDashboardBench({
      contacts: envNumber('BENCH_DASHBOARD_CONTACTS', 100_000, 1000),
      runs: envNumber('BENCH_DASHBOARD_RUNS', 5, 1),
      pages: envNumber('BENCH_DASHBOARD_PAGES', 20, 1),
      redisUrl,
      onCleanup: (step) => undo.push(step),
    }).catch((err) => {
      console.error(`bench: dashboard: ${(err as Error).stack ?? err}`);
      exitCode = 1;
    });
  // The oauth suite (bench/oauth.ts): an OAuth token's check over an API key's, an MCP tool call over REST.
  if (!only || only === 'oauth')
    await runOAuthBench({ requests: envNumber('BENCH_OAUTH_REQUESTS', 1000, 10) })
      .then((ok) => ok || (exitCode = 1))
      .catch((err) => {
        console.error(`bench: oauth: ${(err as Error).stack ?? err}`);
        exitCode = 1;
      });
  // The tracking suite (bench/tracking.ts): the mta's CPU with tracking on and off, the tracking listener, POST /emails
  // beside its hits, GET /emails/metrics over 90 days of 10 million events; PASS/FAIL lines.
  if (!only || only === 'tracking')
    await runTrackingBench({
      messages: envNumber('BENCH_TRACK_MESSAGES', 1000, 1),
      rounds: envNumber('BENCH_TRACK_ROUNDS', 3, 1),
      hitRate: envNumber('BENCH_TRACK_HIT_RATE', 2000, 1),
      hitSeconds: envNumber('BENCH_TRACK_HIT_SECONDS', 10, 1),
      sendRate: envNumber('BENCH_TRACK_SEND_RATE', 100, 1),
      sendSeconds: envNumber('BENCH_TRACK_SEND_SECONDS', 10, 1),
      queries: envNumber('BENCH_TRACK_QUERIES', 30, 1),
      separate: process.env.BENCH_TRACK_SEPARATE === '1',
      redisUrl,
      onCleanup: (step) => undo.push(step),
    }).catch((err) => {
      console.error(`bench: tracking: ${(err as Error).stack ?? err}`);
      exitCode = 1;
    });
  // The broadcasts suite (bench/broadcasts.ts): a broadcast through the real api, worker and mta; PASS/FAIL lines.
  if (!only || only === 'broadcasts')
    await runBroadcastBench({
      size: envNumber('BENCH_BROADCAST_SIZE', 100_000, 1),
      singles: envNumber('BENCH_BROADCAST_SINGLES', 2000, 1),
      pacedSeconds: envNumber('BENCH_BROADCAST_PACED_SECONDS', 10, 1),
      rounds: envNumber('BENCH_BROADCAST_ROUNDS', 3, 1),
      redisUrl,
      onCleanup: (step) => undo.push(step),
    }).catch((err) => {
      console.error(`bench: broadcasts: ${(err as Error).stack ?? err}`);
      exitCode = 1;
    });
  // The imports suite (bench/imports.ts): a CSV through the real api and worker next to COPY; PASS/FAIL lines.
  if (!only || only === 'imports') {
    const importsOk = await runImportBench({
      rows: envNumber('BENCH_IMPORT_ROWS', 1_000_000, 1),
      bigBytes: envNumber('BENCH_IMPORT_BIG_BYTES', 50 * 1024 * 1024, 1024),
      redisUrl,
      onCleanup: (step) => undo.push(step),
    }).catch((err) => {
      console.error(`bench: imports: ${(err as Error).stack ?? err}`);
      return false;
    });
    if (!importsOk) exitCode = 1;
  }
} catch (err) {
  console.error(`bench: ${(err as Error).stack ?? err}`);
  if (results.length) report(results);
} finally {
  await cleanup();
}
// Exit explicitly: a keep-alive socket or timer left in a library must not keep a finished benchmark alive.
process.exit(exitCode);
