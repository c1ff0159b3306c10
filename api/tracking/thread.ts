// The tracking listener in a thread of the api (shared/listener-thread/; api/main.ts starts it): a stream of pixel
// and link hits is answered and recorded on an event loop of its own, so it never queues in front of a REST request
// (bench/README.md, "The tracking listener in a thread of its own"). Its own PostgreSQL pool and engagement
// recorder; its metrics go to the api's registry.
import { relayedCounter, serveListeners } from '../../shared/listener-thread/thread.ts';
import type { AddressInfo } from 'node:net';
import { workerData } from 'node:worker_threads';
import type { Config } from '../../shared/config.ts';
import { createLogger } from '../../shared/logger.ts';
import { createDb } from '../../shared/db/knex.ts';
import { engagementRecorder } from '../../shared/tracking/recorder.ts';
import { secretsKey } from '../../shared/secrets.ts';
import { listen } from '../../shared/startup.ts';
import { createTrackingServer } from './server.ts';

/** PostgreSQL connections of the tracking thread: the host lookups (kept 30 s) and one recorder batch at a time. */
const TRACKING_DB_CONNECTIONS = 5;

const { config } = workerData as { config: Config };
const log = createLogger(config, 'api').child({ thread: 'tracking' });
const db = createDb(config, { min: 0, max: TRACKING_DB_CONNECTIONS });
// The names api/main.ts gives the api's own metrics.
const metrics = { hits: relayedCounter('hits'), recorded: relayedCounter('recorded') };
// Hits answered at once, recorded in one transaction per 50 ms (or 500 hits).
const recorder = engagementRecorder(db, log, {
  delayMs: 50,
  maxRows: 500,
  maxPending: 100_000,
  machineWindowSeconds: config.TRACKING_MACHINE_WINDOW_SECONDS,
  recorded: (r) => metrics.recorded.inc({ outcome: 'recorded' }, r.recorded),
  dropped: (n) => metrics.recorded.inc({ outcome: 'dropped' }, n),
});
const server = createTrackingServer({ config, db, log, secrets: secretsKey(config), recorder, metrics });

serveListeners(
  {
    async listen() {
      await listen(server, config.TRACKING_PORT, config.TRACKING_HOST, 'TRACKING_PORT');
      return (server.address() as AddressInfo).port;
    },
    // Stops taking hits (those in progress are answered), records what waits, closes the pool.
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await recorder.close();
      await db.destroy();
    },
  },
  log,
);
