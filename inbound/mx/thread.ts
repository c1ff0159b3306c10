// The MX listener in a thread of the inbound process (in-thread.ts starts it; shared/listener-thread/), so that
// accepting, which a sending server waits on, never queues behind a receive job (a parse, a clamd scan, DKIM
// verification of a large message) on one event loop, and keeps the process's own CPU priority while the receive jobs
// run at INBOUND_NICE. Its own PostgreSQL pool and receive queue; its metrics go to the main thread's registry.
import { relayedCounter, relayedGauge, serveListeners } from '../../shared/listener-thread/thread.ts';
import { workerData } from 'node:worker_threads';
import type { Config } from '../../shared/config.ts';
import { createLogger } from '../../shared/logger.ts';
import { createDb } from '../../shared/db/knex.ts';
import { createFsBlobStore } from '../../shared/blobs.ts';
import { closeQueues, createQueue, queues } from '../../shared/queue.ts';
import { secretsKey } from '../../shared/secrets.ts';
import { listen } from '../../shared/startup.ts';
import { enqueueReceive } from '../receive/sweep.ts';
import { createMxServer } from './server.ts';

/** PostgreSQL connections of the MX thread: a session holds one only for a statement (the lookup, the insert). */
const MX_DB_CONNECTIONS = 10;

const { config, tls } = workerData as { config: Config; tls: { key: string; cert: string } };
const log = createLogger(config, 'inbound').child({ thread: 'mx' });
const db = createDb(config, { min: 0, max: MX_DB_CONNECTIONS });
const receiveQueue = createQueue(config, queues.receive);
const mx = createMxServer({
  config,
  db,
  blobs: createFsBlobStore(config.BLOB_DIR),
  log,
  secrets: secretsKey(config),
  tls,
  enqueueReceive: (ids) => enqueueReceive(receiveQueue, ids),
  enqueueDelayMs: 20,
  // The names in-thread.ts gives the inbound's own metrics.
  metrics: {
    mxSessions: { open: relayedGauge('sessions.open'), total: relayedCounter('sessions.total') },
    mxRecipients: relayedCounter('recipients'),
    mxMessages: relayedCounter('messages'),
  },
});

serveListeners(
  {
    listen: () => listen(mx.server, config.MX_PORT, config.MX_HOST, 'MX_PORT'),
    // Stops taking mail (sessions in progress finish and get their 250 or a retry), then closes the clients; a
    // receive job not yet handed to Redis is the sweep's.
    async close() {
      await new Promise<void>((resolve) => mx.close(() => resolve()));
      await closeQueues([receiveQueue]);
      await db.destroy();
    },
  },
  log,
);
