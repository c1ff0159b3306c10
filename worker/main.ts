// The worker process: wiring only. Runs the background jobs of the platform from their queues.
import { checkPostgres, checkRedis, readConfig, starting } from '../shared/startup.ts';
import { createLogger } from '../shared/logger.ts';
import { createDb } from '../shared/db/knex.ts';
import { ANALYZE_EVERY_MS, analyzeChangedTables, warnIfAutovacuumOff } from '../shared/db/autovacuum.ts';
import { closeQueues, createQueue, createWorker, queues } from '../shared/queue.ts';
import { createResolver } from '../shared/dns/resolver.ts';
import { createFsBlobStore } from '../shared/blobs.ts';
import { secretsKey } from '../shared/secrets.ts';
import { trapShutdown } from '../shared/shutdown.ts';
import { lowerPriority } from '../shared/priority.ts';
import { runMaintenance } from './maintenance.ts';
import { runRetention } from './retention.ts';
import { createRedis } from '../shared/redis.ts';
import { fillPool } from '../shared/domains/dkim.ts';
import { deliveryEnqueuer } from '../shared/emails/enqueue.ts';
import { webhookService } from './webhooks.ts';
import { createRegistry } from '../shared/metrics/registry.ts';
import { workerMetrics } from '../shared/metrics/worker.ts';
import { queueMetrics } from '../shared/metrics/queues.ts';
import { serveMetrics } from '../shared/metrics/server.ts';
import { startContactJobs } from './contacts.ts';
import { startBroadcastJobs } from './broadcasts.ts';
import { startWorkerTickers } from './tickers.ts';

const config = readConfig('worker');
const log = createLogger(config, 'worker');
// From here on a SIGTERM stops the process cleanly, even one that comes while it is starting.
const shutdown = trapShutdown(log);
// Background jobs give way to the api on a shared machine (threads made later inherit this).
lowerPriority(config.WORKER_NICE, log);
// Room for the webhook pool's endpoints (each one query at a time) next to the fan-out and the other jobs.
const db = createDb(config, { min: 0, max: 20 });
// Metrics (docs/observability.md): served on METRICS_WORKER_PORT, before any job runs (a port in use ends the start).
const registry = createRegistry();
const metrics = workerMetrics(registry);
const metricsListener = await starting(log, async () => {
  await checkPostgres(db, config.DATABASE_URL);
  await checkRedis(config.REDIS_URL);
  return serveMetrics(config, 'worker', registry, log);
});
const autovacuum = await warnIfAutovacuumOff(db, log);
const dns = createResolver({ servers: config.DNS_SERVERS });
const secrets = secretsKey(config);
const blobs = createFsBlobStore(config.BLOB_DIR);

const maintenanceQueue = createQueue(config, queues.maintenance);
const domainsQueue = createQueue(config, queues.domains);
// The retention job's team purge deletes the team's Redis keys with this client.
const redis = createRedis(config);
redis.on('error', (err) => log.warn({ err: err.message }, 'redis.error'));
const contactJobs = await startContactJobs({ config, db, blobs, log });
const broadcastJobs = await startBroadcastJobs({ config, db, log, secrets });
// The queue gauges are read from Redis at each scrape.
queueMetrics(registry, [maintenanceQueue, domainsQueue, ...contactJobs.queues, broadcastJobs.fanoutQueue], log);
const webhooks = webhookService({
  db,
  secrets,
  resolver: dns,
  allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
  log,
  metrics,
});
const deliverQueue = createQueue(config, queues.deliver);
const enqueueDelivery = deliveryEnqueuer(deliverQueue, log);
// One schedule however many workers run: BullMQ keeps a single scheduler per id.
await maintenanceQueue.upsertJobScheduler('hourly', { every: 3600_000 }, { name: 'maintenance', data: {} });
// The nightly retention job: team deletions past their grace window, expired exports (worker/retention.ts).
await maintenanceQueue.upsertJobScheduler(
  'retention',
  { pattern: '0 3 * * *', tz: 'UTC' },
  { name: 'retention', data: {}, opts: { removeOnComplete: 100, removeOnFail: 100 } },
);
// Without autovacuum, its analyze of the tables that changed, once a minute (shared/db/autovacuum.ts).
if (autovacuum) await maintenanceQueue.removeJobScheduler('analyze');
else
  await maintenanceQueue.upsertJobScheduler(
    'analyze',
    { every: ANALYZE_EVERY_MS },
    { name: 'analyze', data: {}, opts: { removeOnComplete: true, removeOnFail: 100 } },
  );
await domainsQueue.upsertJobScheduler('dkim-pool', { every: 30_000 }, { name: 'dkim-pool', data: {} });
// Aborted first thing on a stop: long jobs that can end early (the DKIM pool's refill) do.
const stopping = new AbortController();
const workers = [
  createWorker(config, queues.maintenance, async (job) => {
    if (job.name === 'analyze') {
      const analyzed = await analyzeChangedTables(db);
      if (analyzed.length) log.info({ tables: analyzed }, 'postgres.analyzed');
      return { analyzed };
    }
    if (job.name === 'retention') {
      const done = await runRetention({ db, blobs, redis, config, log });
      log.info(done, 'retention.done');
      return done;
    }
    const removed = await runMaintenance(db, blobs, new Date(), config);
    log.info({ removed }, 'maintenance.done');
    return removed;
  }),
  // The DKIM pool's refill (an earlier version's domain sweep job left waiting does the same: a refill does no harm).
  createWorker(config, queues.domains, async () => ({
    added: await fillPool(db, secrets, config.DKIM_KEY_POOL_SIZE, stopping.signal),
  })),
  ...contactJobs.workers,
  ...broadcastJobs.workers,
];
for (const w of workers) w.on('failed', (job, err) => log.error({ err, queue: w.name, jobId: job?.id }, 'job.failed'));
await webhooks.start();
const tickers = await startWorkerTickers({ config, db, blobs, dns, secrets, log, metrics, enqueueDelivery });
log.info({ queues: workers.map((w) => w.name) }, 'worker.started');

shutdown.ready(async (step) => {
  // Stop claiming, let running jobs finish (a running import pauses at its next batch), then close the clients.
  stopping.abort();
  contactJobs.stop();
  await broadcastJobs.stop();
  step('tickers');
  await tickers.stop();
  step('workers');
  await closeQueues(workers);
  step('webhooks');
  await webhooks.stop();
  step('queues');
  await Promise.all([closeQueues([maintenanceQueue, domainsQueue, deliverQueue]), redis.quit()]);
  step('broadcast enqueues');
  await broadcastJobs.flush();
  step('area queues');
  await closeQueues([...contactJobs.queues, ...broadcastJobs.queues]);
  step('database');
  await db.destroy();
  step('metrics');
  await metricsListener.close();
});
