// The SMTP submission listeners in a thread of the mta (in-thread.ts starts it; shared/listener-thread/), so that
// accepting, which a client waits on, does not share an event loop or a CPU priority with delivery, which can wait:
// the mta's main thread runs at MTA_NICE, this one at the priority the process started with. Its own PostgreSQL pool,
// Redis client and deliver queue; its metrics go to the main thread's registry.
import { relayedCounter, relayedGauge, serveListeners } from '../../shared/listener-thread/thread.ts';
import { workerData } from 'node:worker_threads';
import type { Config } from '../../shared/config.ts';
import { createLogger } from '../../shared/logger.ts';
import { createDb } from '../../shared/db/knex.ts';
import { createFsBlobStore } from '../../shared/blobs.ts';
import { closeQueues, createQueue, queues } from '../../shared/queue.ts';
import { createResolver } from '../../shared/dns/resolver.ts';
import { deliveryEnqueuer } from '../../shared/emails/enqueue.ts';
import { createRedis } from '../../shared/redis.ts';
import { submissionListeners } from './listeners.ts';

/** PostgreSQL connections of the submission thread: a session holds one only for a statement. */
const SUBMISSION_DB_CONNECTIONS = 10;

const { config, tls } = workerData as { config: Config; tls: { key: string; cert: string } };
const log = createLogger(config, 'mta').child({ thread: 'submission' });
const db = createDb(config, { min: 0, max: SUBMISSION_DB_CONNECTIONS });
const deliverQueue = createQueue(config, queues.deliver);
const redis = createRedis(config);
redis.on('error', (err) => log.warn({ err: err.message }, 'redis.error'));
// A submitted message's deliver job goes to Redis in one pipeline per 20 ms, and the 250 waits only for the commit,
// not for Redis too; a crash in that window loses only enqueues, which the delivery sweep redoes.
const enqueueDelivery = deliveryEnqueuer(deliverQueue, log, { delayMs: 20 });

const listeners = submissionListeners({
  config,
  db,
  blobs: createFsBlobStore(config.BLOB_DIR),
  log,
  tls,
  redis,
  dns: createResolver({ servers: config.DNS_SERVERS }),
  enqueueDelivery,
  // The names in-thread.ts gives the mta's own metrics.
  metrics: {
    emailsAccepted: relayedCounter('emailsAccepted'),
    submissionSessions: { open: relayedGauge('sessions.open'), total: relayedCounter('sessions.total') },
  },
});

serveListeners(
  {
    listen: () => listeners.listen(),
    // Stops taking mail (sessions in progress finish), hands the last enqueues to Redis, closes the clients.
    async close() {
      await listeners.close();
      await enqueueDelivery.flush();
      await Promise.all([closeQueues([deliverQueue]), redis.quit()]);
      await db.destroy();
    },
  },
  log,
);
