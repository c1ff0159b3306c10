// The api process: wiring only. Creates the clients, builds the app, listens, shuts down cleanly.
import { createLogger } from '../shared/logger.ts';
import { createDb } from '../shared/db/knex.ts';
import { createRedis } from '../shared/redis.ts';
import { createFsBlobStore } from '../shared/blobs.ts';
import { trapShutdown } from '../shared/shutdown.ts';
import { version } from '../shared/version.ts';
import { createApp } from './app.ts';
import type { ApiDeps } from './deps.ts';
import { createHttpServer } from './server.ts';
import { createResolver } from '../shared/dns/resolver.ts';
import { closeQueues, createQueue, queues } from '../shared/queue.ts';
import { deliveryEnqueuer } from '../shared/emails/enqueue.ts';
import { requestLogWriter } from '../shared/logs/writer.ts';
import { checkPostgres, checkRedis, listen, readConfig, starting } from '../shared/startup.ts';
import { createRegistry } from '../shared/metrics/registry.ts';
import { apiMetrics } from '../shared/metrics/api.ts';
import { serveMetrics } from '../shared/metrics/server.ts';
import { trackingMetrics } from '../shared/metrics/tracking.ts';
import { startListenerThread } from '../shared/listener-thread/start.ts';
import { contactJobs as contactJobQueues } from '../shared/imports/jobs.ts';
import { warmUp } from './warm-up.ts';

const config = readConfig('api');
const log = createLogger(config, 'api');
// From here on a SIGTERM stops the process cleanly, even one that comes while it is starting.
const shutdown = trapShutdown(log);
const db = createDb(config);
const redis = createRedis(config);
redis.on('error', (err) => log.warn({ err: err.message }, 'redis.error'));
const blobs = createFsBlobStore(config.BLOB_DIR);
const dns = createResolver({ servers: config.DNS_SERVERS });
const deliverQueue = createQueue(config, queues.deliver);
// Deliver jobs go to Redis in one pipeline per 20 ms (BullMQ costs a quarter as much per job in fours as alone);
// the answer does not wait for them: a crash in that window loses only enqueues, which the mta's sweep redoes.
const enqueueDelivery = deliveryEnqueuer(deliverQueue, log, { delayMs: 20 });
// Request logs go out in one statement per 50 ms (or 100 rows); a crash loses at most the last 50 ms of them.
const requestLogs = requestLogWriter(db, log, { delayMs: 50, maxRows: 100 });
// Metrics (docs/observability.md): served on METRICS_API_PORT, never on PORT.
const registry = createRegistry();
const metrics = apiMetrics(registry);
const contactJobs = contactJobQueues(config, log);
const apiDeps: ApiDeps = {
  config,
  db,
  redis,
  blobs,
  log,
  version,
  dns,
  enqueueDelivery,
  contactJobs,
  requestLogs,
  metrics,
};
const app = createApp(apiDeps);

const server = createHttpServer(app, config);
// The tracking listener (docs/tracking.md) in a thread of its own (api/tracking/thread.ts): a stream of hits never
// queues in front of a REST request on one event loop.
const tracking = trackingMetrics(registry);
const trackingThread = startListenerThread({
  source: new URL('./tracking/thread.ts', import.meta.url),
  workerData: { config },
  targets: { hits: tracking.hits, recorded: tracking.recorded },
  log,
  name: 'tracking',
});
const { trackingPort, metricsListener } = await starting(log, async () => {
  await checkPostgres(db, config.DATABASE_URL);
  await checkRedis(config.REDIS_URL);
  await listen(server, config.PORT, config.HOST, 'PORT');
  const trackingPort = await trackingThread.listen();
  return { trackingPort, metricsListener: await serveMetrics(config, 'api', registry, log) };
});
log.info({ host: config.HOST, port: config.PORT }, 'api.listening');
log.info({ host: config.TRACKING_HOST, port: trackingPort, thread: await trackingThread.tid }, 'tracking.listening');
if (config.NODE_ENV !== 'test') void warmUp(log);

shutdown.ready(async (step) => {
  step('server');
  await Promise.all([new Promise<void>((resolve) => server.close(() => resolve())), trackingThread.close()]);
  step('request logs, enqueues');
  await Promise.allSettled([requestLogs.close(), enqueueDelivery.flush()]);
  step('oauth');
  await Promise.allSettled([apiDeps.oauth?.close()]);
  step('clients');
  await Promise.allSettled([db.destroy(), redis.quit(), closeQueues([deliverQueue]), contactJobs.close()]);
  step('metrics');
  await metricsListener.close();
});
