// Starts the real api (Koa app, real PostgreSQL, real Redis, real blob directory) on a random loopback port.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Queue } from 'bullmq';
import { loadConfig, type Config } from '../../shared/config.ts';
import { createDb, type Db } from '../../shared/db/knex.ts';
import { createRedis, type Redis } from '../../shared/redis.ts';
import { createFsBlobStore } from '../../shared/blobs.ts';
import { createLogger, type DestinationStream } from '../../shared/logger.ts';
import { version } from '../../shared/version.ts';
import { createApp } from '../../api/app.ts';
import { createHttpServer } from '../../api/server.ts';
import { createTeamWithKey } from '../../shared/cli/commands.ts';
import { createTestDatabase } from './db.ts';
import { seedKeys } from './test-keys.ts';
import { testTlsFiles } from './test-tls.ts';
import { secretsKey } from '../../shared/secrets.ts';
import { requestAt, type RequestOptions, type TestResponse } from './request.ts';
import { createResolver } from '../../shared/dns/resolver.ts';
import { closeQueues, createQueue, queues } from '../../shared/queue.ts';
import { deliveryEnqueuer } from '../../shared/emails/enqueue.ts';
import type { ApiDeps } from '../../api/deps.ts';
import { contactJobs } from '../../shared/imports/jobs.ts';

export interface TestTeam {
  id: string;
  key: string;
}

export interface Platform {
  url: string;
  config: Config;
  db: Db;
  redis: Redis;
  deps: ApiDeps;
  deliverQueue: Queue;
  createTeam(name?: string): Promise<TestTeam>;
  /** fetch against the api with a User-Agent, JSON body and optional bearer key. */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  close(): Promise<void>;
}

export type { RequestOptions, TestResponse } from './request.ts';

/** The team's managed domain (made with the team) as GET /domains lists it. */
export async function managedDomain(p: Platform, team: TestTeam): Promise<{ id: string; name: string }> {
  return (await p.request('GET', '/domains', { key: team.key })).body.data.find((d: { managed: boolean }) => d.managed);
}

export interface PlatformOptions {
  /** Where the api's logger writes (standard output unless given), at LOG_LEVEL: to read what the api logs. */
  logTo?: DestinationStream;
}

export async function startPlatform(
  env: Record<string, string> = {},
  options: PlatformOptions = {},
): Promise<Platform> {
  // A commit answers once PostgreSQL has it, without waiting for the WAL's flush to disk (about 10 ms a commit on a
  // CI machine's disk): no test crashes PostgreSQL, and a commit is seen by every later query either way.
  const database = await createTestDatabase({ asyncCommit: true });
  const blobDir = await mkdtemp(path.join(tmpdir(), 'pw-blobs-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: database.url,
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_PREFIX: `pwtest-${randomBytes(5).toString('hex')}`,
    BLOB_DIR: blobDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    PORT: '0',
    RATE_LIMIT_RPS: '1000',
    SECRETS_KEY: randomBytes(32).toString('base64'),
    // Nothing answers here unless a test starts its own DNS server and passes DNS_SERVERS.
    DNS_SERVERS: '127.0.0.1:9',
    // The tests' names are under `.test` (RFC 2606): nobody's, so a test can never mail a real domain.
    RESERVED_TLDS_ALLOWED: 'test',
    // The processes a test starts (helpers/processes.ts passes this configuration on) serve their metrics on ports the
    // kernel picks: test files run side by side.
    METRICS_API_PORT: '0',
    METRICS_MTA_PORT: '0',
    METRICS_INBOUND_PORT: '0',
    METRICS_WORKER_PORT: '0',
    // The api's tracking listener (docs/tracking.md) too.
    TRACKING_PORT: '0',
    // No DKIM keys made by the worker: it would spend its first seconds on 20 RSA keys (about 4 s of CPU); the pool
    // holds the machine's test keys instead (seedKeys below). test/dkim-pool.test.ts and a worker of
    // test/observability.test.ts fill it.
    DKIM_KEY_POOL_SIZE: '0',
    // A worker process at the test files' own priority: the tests bound its wake (a webhook soon after the commit, a
    // scheduled broadcast soon after its time), not the share a nice-10 worker gets of a machine the files beside it
    // keep busy (CI runs took 5.8 s and 5.1 s there). test/priority.test.ts sets its own value and checks it.
    WORKER_NICE: '0',
    // The machine's test certificate for the SMTP listeners of the processes a test starts (helpers/test-tls.ts).
    ...(await testTlsFiles()),
    ...env,
  });
  const db = createDb(config);
  await seedKeys(db, secretsKey(config), config);
  const redis = createRedis(config);
  const log = createLogger(config, 'api', options.logTo);
  // Generous enough for a loaded CI machine; tests of timeouts build their own resolvers.
  const dns = createResolver({ servers: config.DNS_SERVERS, timeoutMs: 1500, tries: 2 });
  const deliverQueue = createQueue(config, queues.deliver);
  const enqueueDelivery = deliveryEnqueuer(deliverQueue, log);
  const blobs = createFsBlobStore(blobDir);
  const jobs = contactJobs(config, log);
  const deps: ApiDeps = { config, db, redis, blobs, log, version, dns, enqueueDelivery, contactJobs: jobs };
  // PORT is 0 (a port the kernel picks) unless a test needs the api at a port it chose, so that PUBLIC_BASE_URL (the
  // links the mta writes into mail) names it.
  const server: Server = createHttpServer(createApp(deps), config).listen(config.PORT, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const request = (method: string, p: string, o: RequestOptions = {}) => requestAt(url, method, p, o);

  return {
    url,
    config,
    db,
    redis,
    deps,
    deliverQueue,
    request,
    async createTeam(name = 'Test team') {
      const created = await createTeamWithKey(db, name, config.MANAGED_DOMAIN_HOST);
      return { id: created.team.id, key: created.api_key };
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      try {
        const keys = await redis.keys(`${config.REDIS_PREFIX}:*`);
        if (keys.length) await redis.del(...keys);
      } catch {
        // Redis unreachable (a test pointed the platform at a dead one): nothing of ours is there to remove.
      }
      await deps.oauth?.close();
      await Promise.allSettled([db.destroy(), redis.quit(), closeQueues([deliverQueue]), jobs.close()]);
      await database.drop();
      await rm(blobDir, { recursive: true, force: true });
    },
  };
}
