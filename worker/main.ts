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
import { buildPendingExports } from '../shared/teams/export.ts';
import { createRedis } from '../shared/redis.ts';
import { sweepClaims, sweepDomains, SWEEP_EVERY_MS } from './domains.ts';
import { fillPool } from '../shared/domains/dkim.ts';
import { releaseScheduled } from './sending.ts';
import { deliveryEnqueuer } from '../shared/emails/enqueue.ts';
import { webhookService } from './webhooks.ts';
import { metricsRollup } from './email-metrics.ts';
import { createRegistry } from '../shared/metrics/registry.ts';
import { workerMetrics } from '../shared/metrics/worker.ts';
import { queueMetrics } from '../shared/metrics/queues.ts';
import { serveMetrics } from '../shared/metrics/server.ts';
import { startContactJobs } from './contacts.ts';
import { startBroadcastJobs } from './broadcasts.ts';

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
const sendingQueue = createQueue(config, queues.sending);
const webhooksQueue = createQueue(config, queues.webhooks);
const teamsQueue = createQueue(config, queues.teams);
// The retention job's team purge deletes the team's Redis keys with this client.
const redis = createRedis(config);
redis.on('error', (err) => log.warn({ err: err.message }, 'redis.error'));
const contactJobs = await startContactJobs({ config, db, blobs, log });
const broadcastJobs = await startBroadcastJobs({ config, db, log, secrets });
// The queue gauges are read from Redis at each scrape.
queueMetrics(registry, [maintenanceQueue, domainsQueue, sendingQueue, ...contactJobs.queues], log);
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
// The counters of GET /emails/metrics, from the events, a second behind at most (docs/metrics.md).
const rollup = metricsRollup({ db, log });
// One schedule however many workers run: BullMQ keeps a single scheduler per id.
await maintenanceQueue.upsertJobScheduler('hourly', { every: 3600_000 }, { name: 'maintenance', data: {} });
await domainsQueue.upsertJobScheduler(
  'sweep',
  { every: SWEEP_EVERY_MS },
  { name: 'sweep', data: {}, opts: { removeOnComplete: true, removeOnFail: 100 } },
);
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
// Team exports asked for are built within two seconds (shared/teams/export.ts; the rows say what is pending).
await teamsQueue.upsertJobScheduler(
  'exports',
  { every: 2000 },
  { name: 'exports', data: {}, opts: { removeOnComplete: true, removeOnFail: 100 } },
);
await domainsQueue.upsertJobScheduler('dkim-pool', { every: 30_000 }, { name: 'dkim-pool', data: {} });
// Webhooks run in this process, woken by the database (./webhooks.ts); the queue tick of earlier versions goes.
await webhooksQueue.removeJobScheduler('tick');
// Scheduled emails go out within a second of their time: a run every half second leaves the other half for the
// run itself (a partial index finds the due ones).
await sendingQueue.upsertJobScheduler(
  'release',
  { every: 500 },
  { name: 'release', data: {}, opts: { removeOnComplete: true, removeOnFail: 100 } },
);

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
  createWorker(
    config,
    queues.domains,
    async (job) => {
      if (job.name === 'dkim-pool')
        return { added: await fillPool(db, secrets, config.DKIM_KEY_POOL_SIZE, stopping.signal) };
      return {
        checked: await sweepDomains(db, dns, config, log),
        claims: await sweepClaims(db, { resolver: dns, hosts: config, secrets }, log),
      };
    },
    { concurrency: 2 },
  ),
  createWorker(config, queues.teams, async () => ({
    exports: await buildPendingExports({ db, blobs, config, log }),
  })),
  createWorker(config, queues.sending, async () => ({
    released: await releaseScheduled(db, enqueueDelivery, new Date(), undefined, {
      log,
      released: metrics.scheduledReleased,
    }),
  })),
  ...contactJobs.workers,
  ...broadcastJobs.workers,
];
for (const w of workers) w.on('failed', (job, err) => log.error({ err, queue: w.name, jobId: job?.id }, 'job.failed'));
await webhooks.start();
rollup.start();
log.info({ queues: workers.map((w) => w.name) }, 'worker.started');

shutdown.ready(async (step) => {
  // Stop claiming, let running jobs finish (a running import pauses at its next batch), then close the clients.
  stopping.abort();
  contactJobs.stop();
  await broadcastJobs.stop();
  step('workers');
  await closeQueues(workers);
  step('webhooks');
  await webhooks.stop();
  step('rollup');
  await rollup.stop();
  step('queues');
  await Promise.all([
    closeQueues([maintenanceQueue, domainsQueue, sendingQueue, webhooksQueue, teamsQueue, deliverQueue]),
    redis.quit(),
  ]);
  step('broadcast enqueues');
  await broadcastJobs.flush();
  step('area queues');
  await closeQueues([...contactJobs.queues, ...broadcastJobs.queues]);
  step('database');
  await db.destroy();
  step('metrics');
  await metricsListener.close();
});
