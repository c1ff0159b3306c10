import { Redis } from 'ioredis';
import type { Config } from './config.ts';

export type { Redis };

/** A Redis connection. Keys are prefixed by the caller with `redisKey` (BullMQ forbids ioredis' keyPrefix). */
export function createRedis(config: Pick<Config, 'REDIS_URL'>, options: { forQueue?: boolean } = {}): Redis {
  return new Redis(config.REDIS_URL, {
    // BullMQ workers need blocking commands to wait forever; plain clients give up after two reconnects
    // (a few hundred ms) so a request never hangs on a Redis outage.
    maxRetriesPerRequest: options.forQueue ? null : 2,
  });
}

export function redisKey(config: Pick<Config, 'REDIS_PREFIX'>, ...parts: string[]): string {
  return [config.REDIS_PREFIX, ...parts].join(':');
}
