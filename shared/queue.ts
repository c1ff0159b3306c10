// Queue names and options in one place. Jobs carry ids only; PostgreSQL owns the state they act on.
import { Queue, Worker, type Processor, type WorkerOptions } from 'bullmq';
import type { Config } from './config.ts';
import { createRedis, redisKey } from './redis.ts';

export const queues = {
  /** Housekeeping: expired idempotency keys, request-log retention. */
  maintenance: 'maintenance',
  /** Domain verification sweep and the DKIM key pool. */
  domains: 'domains',
} as const;

export type QueueName = (typeof queues)[keyof typeof queues];

function prefix(config: Pick<Config, 'REDIS_PREFIX'>): string {
  return redisKey(config, 'bull');
}

export function createQueue(config: Config, name: QueueName): Queue {
  return new Queue(name, {
    connection: createRedis(config, { forQueue: true }),
    prefix: prefix(config),
    defaultJobOptions: { removeOnComplete: 1000, removeOnFail: 5000, attempts: 5, backoff: { type: 'exponential', delay: 1000 } },
  });
}

export function createWorker(config: Config, name: QueueName, processor: Processor, options: Partial<WorkerOptions> = {}): Worker {
  return new Worker(name, processor, {
    connection: createRedis(config, { forQueue: true }),
    prefix: prefix(config),
    concurrency: 1,
    ...options,
  });
}
