// The world of the webhooks suite (bench/webhooks.ts): a fresh database and Redis prefix, the real api, mta and
// worker (worker/main.ts, the production entry point) as their own processes, a loopback DNS server and SMTP
// sink for the mta's deliveries, and a loopback HTTP receiver in the bench process that timestamps each webhook.
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { loadConfig } from '../shared/config.ts';
import { createDb, type Db } from '../shared/db/knex.ts';
import { createRedis } from '../shared/redis.ts';
import { createTestDatabase } from '../test/helpers/db.ts';
import { startDnsServer, type DnsServer } from '../test/helpers/dns-server.ts';
import { startSmtpSink, type SmtpSink } from '../test/helpers/smtp-sink.ts';
import { spawnMta, spawnPlatform, startServer, type ChildServer } from './servers.ts';
import { exited, freePort } from './sending-peers.ts';

export interface Arrival {
  /** Date.now() when the body was complete. */
  at: number;
  /** The receiver path's last segment: which endpoint. */
  endpoint: string;
  id: string;
  body: { type: string; created_at: string; data: Record<string, unknown> };
}

export interface BenchReceiver {
  url: string;
  arrivals: Arrival[];
  /** Resolves once `n` webhooks have arrived, or with false after `ms`. */
  waitFor(n: number, ms: number): Promise<boolean>;
  reset(): void;
  close(): Promise<void>;
}

/** A customer's endpoint that answers 200 at once over keep-alive and keeps what arrived, when. */
export async function startBenchReceiver(): Promise<BenchReceiver> {
  let arrivals: Arrival[] = [];
  let waiter: (() => void) | undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      arrivals.push({
        at,
        endpoint: (req.url ?? '').split('/').pop() ?? '',
        id: String(req.headers['webhook-id']),
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
      });
      waiter?.();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get arrivals() {
      return arrivals;
    },
    reset() {
      arrivals = [];
    },
    waitFor(n, ms) {
      if (arrivals.length >= n) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => ((waiter = undefined), resolve(false)), ms);
        waiter = () => {
          if (arrivals.length < n) return;
          clearTimeout(timer);
          waiter = undefined;
          resolve(true);
        };
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface ChildProc {
  pid: number;
  stop(): Promise<void>;
}

/**
 * Spawns `file` as production runs it. Its JSON log lines go to our stderr when they are warnings or worse;
 * resolves once one carries `readyMsg`.
 */
export async function spawnEntry(file: string, env: Record<string, string>, readyMsg: string): Promise<ChildProc> {
  const child: ChildProcess = spawnPlatform(file, { ...env, LOG_LEVEL: 'info' }, ['ignore', 'pipe', 2]);
  const proc = {
    pid: child.pid ?? -1,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited(child);
      clearTimeout(timer);
    },
  };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${file}: no "${readyMsg}" within 30 s`)), 30_000);
    child.once('exit', (code) => reject(new Error(`${file} exited (${code}) before "${readyMsg}"`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes(`"msg":"${readyMsg}"`)) {
        clearTimeout(timer);
        resolve();
      } else if (/"level":(40|50|60)/.test(line)) {
        process.stderr.write(`${file}: ${line}\n`);
      }
    });
  });
  return proc;
}

export interface World {
  db: Db;
  env: Record<string, string>;
  api: ChildServer;
  mta: ChildProc;
  worker: ChildProc;
  dns: DnsServer;
  sink: SmtpSink;
  receiver: BenchReceiver;
}

export async function startWorld(redisUrl: string, onCleanup: (step: () => Promise<unknown>) => void): Promise<World> {
  const database = await createTestDatabase();
  onCleanup(() => database.drop());
  const blobDir = await mkdtemp(path.join(tmpdir(), 'pw-bench-hooks-'));
  onCleanup(() => rm(blobDir, { recursive: true, force: true }));
  const redisPrefix = `pwbench-hooks-${randomBytes(5).toString('hex')}`;
  onCleanup(async () => {
    const redis = createRedis({ REDIS_URL: redisUrl });
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    await redis.quit();
  });
  const dns = await startDnsServer();
  onCleanup(() => dns.close());
  const sink = await startSmtpSink({ starttls: false });
  onCleanup(() => sink.close());
  const receiver = await startBenchReceiver();
  onCleanup(() => receiver.close());

  const env = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'error',
    HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    REDIS_PREFIX: redisPrefix,
    BLOB_DIR: blobDir,
    RATE_LIMIT_RPS: '100000',
    SECRETS_KEY: randomBytes(32).toString('base64'),
    DNS_SERVERS: dns.address,
    SMTP_DELIVERY_PORT: String(sink.port),
    SMTP_HOST: '127.0.0.1',
    SMTP_SUBMISSION_PORT: String(await freePort()),
    SMTP_SUBMISSION_TLS_PORT: String(await freePort()),
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    // The bench's names are under .test (RFC 2606): the platform takes them as ordinary domains.
    RESERVED_TLDS_ALLOWED: 'test',
  };
  const db = createDb(loadConfig(env), { min: 0, max: 8 });
  onCleanup(() => db.destroy());
  const api = await startServer('api (webhooks)', 'api/main.ts', env);
  onCleanup(() => api.stop());
  const mta = await spawnMta(env, Number(env.SMTP_SUBMISSION_PORT), onCleanup);
  const worker = await spawnEntry('worker/main.ts', env, 'worker.started');
  onCleanup(() => worker.stop());
  return { db, env, api, mta, worker, dns, sink, receiver };
}
