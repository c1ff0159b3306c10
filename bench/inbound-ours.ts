// Our side of the inbound suite (bench/inbound.ts): the real inbound process (inbound/main.ts, the MX listener
// and the receive workers, as `npm run inbound` runs it) on a fresh database, blob directory and Redis prefix,
// with one team whose domain receives mail, and a loopback DNS server in the bench process for the receive
// job's SPF/DKIM/DMARC lookups (the sender domain publishes SPF for 127.0.0.1; every lookup answers at once, where
// production waits on a resolver). The bench process holds its own handle on the receive queue so a run can
// pause the workers (the MX alone) and resume them (the receive job alone).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../shared/config.ts';
import { createDb, type Db } from '../shared/db/knex.ts';
import { createRedis } from '../shared/redis.ts';
import { createQueue, queues } from '../shared/queue.ts';
import { createTeamWithKey } from '../shared/cli/commands.ts';
import { newId } from '../shared/ids.ts';
import { createTestDatabase } from '../test/helpers/db.ts';
import { startDnsServer } from '../test/helpers/dns-server.ts';
import { spawnPlatform } from './servers.ts';
import { exited, freePort, listening } from './sending-peers.ts';

export const RECEIVING_DOMAIN = 'bench-inbound.test';
/** The envelope sender's domain (smtp-source -f a@bench-remote-sender.test). */
export const SENDER_DOMAIN = 'bench-remote-sender.test';

export interface InboundOptions {
  redisUrl: string;
  onCleanup(step: () => Promise<unknown>): void;
}

export interface Inbound {
  pid: number;
  mxPort: number;
  db: Db;
  /** Stops the receive workers taking jobs (BullMQ's queue-wide pause); jobs still queue up. */
  pauseReceive(): Promise<void>;
  resumeReceive(): Promise<void>;
  /** received_messages rows by status. */
  messages(): Promise<{ stored: number; processed: number }>;
  /** received_emails by dropped_reason (`kept`: none), to see that the receive job did real work. */
  outcomes(): Promise<Record<string, number>>;
  /** Resolves with performance.now() once `n` rows are processed, or undefined after `ms`. */
  processedBy(n: number, ms: number): Promise<number | undefined>;
  stop(): Promise<void>;
}

async function dropRedisPrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = createRedis({ REDIS_URL: redisUrl });
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  await redis.quit();
}

export async function startInbound(o: InboundOptions): Promise<Inbound> {
  const database = await createTestDatabase();
  o.onCleanup(() => database.drop());
  const blobDir = await mkdtemp(path.join(tmpdir(), 'pw-bench-inbound-'));
  o.onCleanup(() => rm(blobDir, { recursive: true, force: true }));
  const redisPrefix = `pwbench-in-${randomBytes(5).toString('hex')}`;
  o.onCleanup(() => dropRedisPrefix(o.redisUrl, redisPrefix));
  const dns = await startDnsServer();
  o.onCleanup(() => dns.close());
  dns.set(SENDER_DOMAIN, 'TXT', ['v=spf1 ip4:127.0.0.1 -all']);
  dns.set(`_dmarc.${SENDER_DOMAIN}`, 'TXT', ['v=DMARC1; p=none']);
  const mxPort = await freePort();
  const env = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    DATABASE_URL: database.url,
    REDIS_URL: o.redisUrl,
    REDIS_PREFIX: redisPrefix,
    BLOB_DIR: blobDir,
    SECRETS_KEY: randomBytes(32).toString('base64'),
    MX_HOST: '127.0.0.1',
    MX_PORT: String(mxPort),
    MTA_HOSTNAME: `mx.${RECEIVING_DOMAIN}`,
    DNS_SERVERS: dns.address,
    // The bench's names are under .test (RFC 2606): the platform takes them as ordinary domains.
    RESERVED_TLDS_ALLOWED: 'test',
  };
  const config = loadConfig(env);
  const db = createDb(config, { min: 0, max: 2 });
  o.onCleanup(() => db.destroy());
  const { team } = await createTeamWithKey(db, 'Bench inbound');
  await db('domains').insert({
    id: newId(),
    team_id: team.id,
    name: RECEIVING_DOMAIN,
    status: 'verified',
    receiving: 'enabled',
    receiving_host: '@',
  });
  const queue = createQueue(config, queues.receive);
  o.onCleanup(() => queue.close());

  const child = spawnPlatform('inbound/main.ts', env, ['ignore', 2, 2]);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited(child);
    clearTimeout(timer);
  };
  o.onCleanup(stop);
  // The inbound process has no HTTP listener: it is up once the MX accepts connections.
  await listening(mxPort, 60_000, () => child.exitCode === null && child.signalCode === null);

  const messages = async () => {
    const rows = (await db('received_messages').select('status').count({ n: '*' }).groupBy('status')) as {
      status: string;
      n: string;
    }[];
    const by = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    return { stored: by.stored ?? 0, processed: by.processed ?? 0 };
  };
  return {
    pid: child.pid ?? -1,
    mxPort,
    db,
    pauseReceive: () => queue.pause(),
    resumeReceive: () => queue.resume(),
    messages,
    async outcomes() {
      const rows = (await db('received_emails')
        .select('dropped_reason')
        .count({ n: '*' })
        .groupBy('dropped_reason')) as { dropped_reason: string | null; n: string }[];
      return Object.fromEntries(rows.map((r) => [r.dropped_reason ?? 'kept', Number(r.n)]));
    },
    async processedBy(n, ms) {
      const deadline = performance.now() + ms;
      // One count query every 100 ms: cheap next to the work it waits for.
      while ((await messages()).processed < n) {
        if (performance.now() > deadline) return undefined;
        await new Promise((r) => setTimeout(r, 100));
      }
      return performance.now();
    },
    stop,
  };
}
