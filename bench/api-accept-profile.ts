// CPU per POST /emails on the accept side alone: the real api (api/main.ts, NODE_ENV=production, LOG_LEVEL=error,
// as the sending suite runs it) on a fresh database, with NO mta, so every PostgreSQL backend of the database is
// the api's and its CPU is the accept path's own. Deliveries pile up in Redis unread. Prints the CPU ms per
// accepted message of the api process, its PostgreSQL backends and Redis (the whole server).
//
//   npx tsx bench/api-accept-profile.ts                          # 2000 messages, 20 connections
//   API_PROFILE_MESSAGES=3000 API_PROFILE_CPU_PROF=/tmp/prof npx tsx bench/api-accept-profile.ts
//
// API_PROFILE_CPU_PROF=<dir> writes a .cpuprofile of the api (bench/sending-cpuprofile.ts summarises it).
// API_PROFILE_RUNS (default 3) repeats the measured batch; each run prints its own line. API_PROFILE_RATE=<n>: a
// fixed rate (requests per second overall) instead of as fast as the connections go. API_PROFILE_LOG_LEVEL (default
// error): `info` is production's default (a line per request).
import './env.ts'; // first: the configuration, before any helper reads it
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../shared/config.ts';
import { createDb } from '../shared/db/knex.ts';
import { createRedis } from '../shared/redis.ts';
import { createTestDatabase } from '../test/helpers/db.ts';
import { startDnsServer } from '../test/helpers/dns-server.ts';
import { startServer } from './servers.ts';
import { cpuOf, cpuOfAll } from './proc.ts';
import { apiAccept, readySender, type Ours } from './sending-ours.ts';

const messages = Number(process.env.API_PROFILE_MESSAGES ?? 2000);
const runs = Number(process.env.API_PROFILE_RUNS ?? 3);
const connections = Number(process.env.API_PROFILE_CONNECTIONS ?? 20);
const rate = process.env.API_PROFILE_RATE ? Number(process.env.API_PROFILE_RATE) : undefined;
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const undo: (() => Promise<unknown>)[] = [];
const cleanup = async () => {
  for (const step of undo.reverse()) await step().catch(() => undefined);
};
process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));

try {
  const database = await createTestDatabase();
  undo.push(() => database.drop());
  const blobDir = await mkdtemp(path.join(tmpdir(), 'pw-bench-api-'));
  undo.push(() => rm(blobDir, { recursive: true, force: true }));
  const dns = await startDnsServer();
  undo.push(() => dns.close());
  const redisPrefix = `pwbench-api-${randomBytes(5).toString('hex')}`;
  undo.push(async () => {
    const redis = createRedis({ REDIS_URL: redisUrl });
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    await redis.quit();
  });
  const extra: Record<string, string> = {};
  const profDir = process.env.API_PROFILE_CPU_PROF;
  if (profDir) {
    const hook = path.join(profDir, 'profile-hook.mjs');
    writeFileSync(
      hook,
      [
        "import { Session } from 'node:inspector';",
        "import { writeFileSync } from 'node:fs';",
        'const s = new Session(); s.connect();',
        "s.post('Profiler.enable'); s.post('Profiler.setSamplingInterval', { interval: 200 }); s.post('Profiler.start');",
        "process.on('exit', () => s.post('Profiler.stop', (err, r) => { if (!err) writeFileSync(" +
          `${JSON.stringify(profDir)} + '/api-' + process.pid + '.cpuprofile', JSON.stringify(r.profile)); }));`,
      ].join('\n'),
    );
    extra.NODE_OPTIONS = `--import=${hook}`;
  }
  const env = {
    NODE_ENV: 'production',
    LOG_LEVEL: process.env.API_PROFILE_LOG_LEVEL ?? 'error',
    HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    REDIS_PREFIX: redisPrefix,
    BLOB_DIR: blobDir,
    RATE_LIMIT_RPS: '100000',
    SECRETS_KEY: randomBytes(32).toString('base64'),
    DNS_SERVERS: dns.address,
    BULK_DAILY_LIMIT: '100000000',
    // The bench's names are under .test (RFC 2606): the platform takes them as ordinary domains.
    RESERVED_TLDS_ALLOWED: 'test',
    ...extra,
  };
  const config = loadConfig(env);
  const db = createDb(config, { min: 0, max: 2 });
  undo.push(() => db.destroy());
  const api = await startServer('api (accept)', 'api/main.ts', env);
  undo.push(() => api.stop());
  const key = await readySender({ db, config, dns, apiUrl: api.url, teamName: 'Bench api accept' });
  await db.destroy();

  const ours = { api, key } as unknown as Ours;
  const warm = await apiAccept(ours, 500, connections, 10240);
  if (warm.failed) throw new Error(`warm-up: ${warm.failed} failed`);
  const dbName = new URL(database.url).pathname.slice(1);
  for (let i = 0; i < runs; i++) {
    const a = { api: cpuOf(api.pid), pg: cpuOfAll(/^postgres/, ` ${dbName} `), redis: cpuOfAll(/^redis-server/) };
    const r = await apiAccept(ours, messages, connections, 10240, rate);
    const b = { api: cpuOf(api.pid), pg: cpuOfAll(/^postgres/, ` ${dbName} `), redis: cpuOfAll(/^redis-server/) };
    const per = (x: number) => ((x * 1000) / r.ok).toFixed(2);
    console.log(
      `n=${r.ok} failed=${r.failed} ${r.rate.toFixed(0)}/s p50 ${r.p50} p99 ${r.p99} | ms CPU/msg: api ${per(b.api - a.api)} ` +
        `postgres ${per(b.pg - a.pg)} redis* ${per(b.redis - a.redis)} | api+pg ${per(b.api - a.api + b.pg - a.pg)} | load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
    );
  }
} finally {
  await cleanup();
}
