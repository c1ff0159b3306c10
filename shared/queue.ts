// Queue names and options in one place. Jobs carry ids only; PostgreSQL owns the state they act on.
import { Queue, Worker, type Processor, type WorkerOptions } from 'bullmq';
import type { Config } from './config.ts';
import { redisKey } from './redis.ts';

export const queues = {
  /** Housekeeping: expired idempotency keys, request-log retention. */
  maintenance: 'maintenance',
  /** The DKIM key pool's refill (domain verification ticks in the worker: worker/tickers.ts). */
  domains: 'domains',
  /** Delivery of an accepted email: job data {emailId}, job id = the email id (a re-enqueue is harmless). */
  deliver: 'deliver',
  /**
   * Delivery of a broadcast's emails: the same job as `deliver`, on a queue of its own that the mta works with fewer
   * slots (MTA_BULK_CONCURRENCY), so a broadcast's backlog never stands in front of transactional mail.
   */
  deliverBulk: 'deliver-bulk',
  /** Broadcast fan-outs: job data {broadcastId} (shared/broadcasts/fanout.ts), and the sweep that starts them. */
  broadcasts: 'broadcasts',
  /** Retired: emptied at start (earlier versions' release schedule; the worker now ticks it: shared/ticker.ts). */
  sending: 'sending',
  /** Retired: emptied at start (earlier versions' delivery sweep schedule; the mta now ticks it). */
  deliverySweep: 'delivery-sweep',
  /** Retired: emptied at start (earlier versions' webhook tick; the worker now runs webhooks itself). */
  webhooks: 'webhooks',
  /** Processing of a message the MX stored: job data {messageId}, job id = the received_messages id. */
  receive: 'receive',
  /** The inbound sweep: re-enqueues received messages a crash left stored but unprocessed. */
  receiveSweep: 'receive-sweep',
  /** A contact import: job data {importId}, job id = the import's id (shared/imports/jobs.ts). */
  contactImports: 'contact-imports',
  /**
   * Contact housekeeping: a team's billable-contact peak after its contacts changed (job data {teamId}, one job per
   * team per 10 s) and the sweep that re-enqueues imports whose job was lost.
   */
  contacts: 'contacts',
  /** Retired: emptied at start (earlier versions' export sweep schedule; the worker now ticks it). */
  teams: 'teams',
} as const;

export type QueueName = (typeof queues)[keyof typeof queues];

function prefix(config: Pick<Config, 'REDIS_PREFIX'>): string {
  return redisKey(config, 'bull');
}

/** Connection options, not a client: BullMQ then owns its connections and closes them on close(). */
function connection(config: Pick<Config, 'REDIS_URL'>) {
  const u = new URL(config.REDIS_URL);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: Number(u.pathname.slice(1) || 0),
    tls: u.protocol === 'rediss:' ? {} : undefined,
    maxRetriesPerRequest: null,
  };
}

/** What a queue or worker needs of the configuration. */
type RedisConfig = Pick<Config, 'REDIS_URL' | 'REDIS_PREFIX'>;

export function createQueue(config: RedisConfig, name: QueueName): Queue {
  return new Queue(name, {
    connection: connection(config),
    prefix: prefix(config),
    defaultJobOptions: {
      removeOnComplete: 1000,
      removeOnFail: 5000,
      attempts: 5,
      backoff: { type: 'exponential', delay: 1000 },
    },
  });
}

export function createWorker(
  config: RedisConfig,
  name: QueueName,
  processor: Processor,
  options: Partial<WorkerOptions> = {},
): Worker {
  return new Worker(name, processor, {
    connection: connection(config),
    prefix: prefix(config),
    concurrency: 1,
    ...options,
  });
}

/** How long a stop waits for a queue or worker still connecting (Redis away) before closing it anyway. */
const READY_BEFORE_CLOSE_MS = 5000;

/**
 * Closes queues and workers (a worker after its running jobs), each once it has finished connecting. BullMQ 5
 * closes a connection that is still starting (its Redis version check in flight) by dropping it, and the start's
 * failure is then emitted as an `error` event on a connection whose listeners the close removed: an uncaught
 * exception that ended the process in the middle of its clean stop.
 */
export async function closeQueues(items: (Queue | Worker)[]): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, READY_BEFORE_CLOSE_MS)));
  await Promise.race([Promise.allSettled(items.map((i) => i.waitUntilReady())), late]);
  clearTimeout(timer);
  await Promise.all(items.map((i) => i.close()));
}

/**
 * What an earlier version kept in Redis and nothing takes now (work that ticks in its process: shared/ticker.ts):
 * `schedulers` removed with their next job from queues still in use, `retired` queues emptied of everything (their
 * schedulers, and a job one of them made due before this start, which no worker would ever take).
 */
export async function retireSchedules(
  config: RedisConfig,
  schedulers: [QueueName, string][],
  retired: QueueName[] = [],
): Promise<void> {
  const opened = new Map<QueueName, Queue>();
  for (const name of [...schedulers.map(([n]) => n), ...retired])
    if (!opened.has(name)) opened.set(name, createQueue(config, name));
  try {
    for (const [name, id] of schedulers) await opened.get(name)!.removeJobScheduler(id);
    for (const name of retired) await opened.get(name)!.obliterate({ force: true });
  } finally {
    await closeQueues([...opened.values()]);
  }
}
