// Revocations heard by every api copy at once: a grant revoked (DELETE /oauth/grants/{id}, the dashboard, a replayed
// code or refresh token) or an access token revoked (RFC 7009) in one copy is published on a Redis channel, and
// every copy's token cache forgets it (tokens.ts). A grant travels by its id; a token's value is a secret and never
// leaves the process: its revocation clears the caches whole (rare). Pub/sub delivers to those listening: the
// caches answer from memory only while this copy is subscribed (`live`), and forget everything when the connection
// drops, so a message missed while away cannot leave a revoked grant cached.
import type { Redis } from '../../shared/redis.ts';
import type { Logger } from '../../shared/logger.ts';

export interface RevocationBus {
  /** Is this copy subscribed (may the token cache answer from memory)? Subscribes on first use. */
  live(): boolean;
  /** Resolves once Redis has handed the message to every subscribed copy (or failed, logged). */
  publishGrant(providerGrantId: string): Promise<void>;
  publishToken(): Promise<void>;
  close(): Promise<void>;
}

interface Listener {
  grant(providerGrantId: string): void;
  all(): void;
}

export function revocationBus(redis: Redis, channel: string, log: Logger, listener: Listener): RevocationBus {
  let subscriber: Redis | undefined;
  let subscribed = false;
  let closed = false;

  const start = () => {
    if (subscriber || closed) return;
    const sub = (subscriber = redis.duplicate({ maxRetriesPerRequest: null }));
    sub.on('message', (_channel: string, message: string) => {
      if (message === '*') return listener.all();
      if (message.startsWith('grant:')) listener.grant(message.slice('grant:'.length));
    });
    // ioredis subscribes again after a reconnect: the cache is live again once it has.
    sub.on('ready', () => {
      if (subscribed === false && !closed) void sub.subscribe(channel).then(() => (subscribed = true), noted);
    });
    sub.on('close', () => {
      if (subscribed) listener.all();
      subscribed = false;
    });
    sub.on('error', (err: Error) => log.warn({ err }, 'oauth.revocation_channel_error'));
  };
  const noted = (err: unknown) => log.warn({ err }, 'oauth.revocation_channel_error');
  const publish = (message: string) => redis.publish(channel, message).then(() => undefined, noted);

  return {
    live() {
      start();
      return subscribed;
    },
    publishGrant: (id) => publish(`grant:${id}`),
    publishToken: () => publish('*'),
    async close() {
      closed = true;
      subscribed = false;
      await subscriber?.quit().catch(() => subscriber?.disconnect());
    },
  };
}
