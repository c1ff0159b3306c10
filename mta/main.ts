// The mta process: wiring only. Runs the SMTP submission listeners (mta/submission/: STARTTLS on
// SMTP_SUBMISSION_PORT, implicit TLS on SMTP_SUBMISSION_TLS_PORT) in a thread of their own, and the delivery pipeline
// (mta/delivery/, see mta/README.md) on the main thread: deliver jobs from queues.deliver and the delivery sweep.
import { createLogger } from '../shared/logger.ts';
import { createDb } from '../shared/db/knex.ts';
import { createFsBlobStore } from '../shared/blobs.ts';
import { closeQueues, createQueue, createWorker, queues, retireSchedules } from '../shared/queue.ts';
import { ticker } from '../shared/ticker.ts';
import { trapShutdown } from '../shared/shutdown.ts';
import { closeDeliveryDeps, createDeliveryDeps, retryOn } from './delivery/deps.ts';
import { processDelivery } from './delivery/job.ts';
import { sweepDeliveries, SWEEP_EVERY_MS } from './delivery/sweep.ts';
import { startSubmissionThread } from './submission/in-thread.ts';
import { tlsCredentials } from '../shared/tls/certificate.ts';
import { ensurePlatformKey, platformDkimRecord } from '../shared/domains/platform-dkim.ts';
import { lowerPriority } from '../shared/priority.ts';
import { checkPostgres, checkRedis, readConfig, starting } from '../shared/startup.ts';
import { createRegistry } from '../shared/metrics/registry.ts';
import { mtaMetrics } from '../shared/metrics/mta.ts';
import { queueMetrics } from '../shared/metrics/queues.ts';
import { serveMetrics } from '../shared/metrics/server.ts';

/** The mta's PostgreSQL connections (see below). */
const MTA_DB_CONNECTIONS = 20;

const config = readConfig('mta');
const log = createLogger(config, 'mta');
// From here on a SIGTERM stops the process cleanly, even one that comes while it is starting.
const shutdown = trapShutdown(log);
const registry = createRegistry();
const metrics = mtaMetrics(registry);
const tls = await tlsCredentials(config, config.MTA_HOSTNAME);
if (tls.selfSigned)
  log.warn('submission.self_signed_certificate: set SMTP_TLS_KEY_FILE and SMTP_TLS_CERT_FILE in production');
// Accepting a submission, which a client waits on, runs in a thread of its own at the process's priority (made now,
// before any lowering, so that it inherits the process's); bench/README.md, "Submission in a thread of its own".
const submission = startSubmissionThread({ config, tls, metrics, log });
// A deliver job holds a connection only for its statements (taking the lease, renewing it; its records go through one
// group commit at a time), never while it waits on a peer: a pool far smaller than MTA_CONCURRENCY serves it, and
// copies of the mta do not run PostgreSQL out of connections (max_connections is 100 by default).
const db = createDb(config, { min: 0, max: MTA_DB_CONNECTIONS });
// Metrics (docs/observability.md): served on METRICS_MTA_PORT, before any job runs (a port in use ends the start).
const metricsListener = await starting(log, async () => {
  await checkPostgres(db, config.DATABASE_URL);
  await checkRedis(config.REDIS_URL);
  return serveMetrics(config, 'mta', registry, log);
});
const blobs = createFsBlobStore(config.BLOB_DIR);

const deliverQueue = createQueue(config, queues.deliver);
const bulkQueue = createQueue(config, queues.deliverBulk);
// The queue gauges are read from Redis at each scrape.
queueMetrics(registry, [deliverQueue, bulkQueue], log);
const delivery = createDeliveryDeps(config, { db, blobs, log }, { queue: deliverQueue, metrics });
// Broadcasts' emails: the same pipeline (sessions, per-destination limits, signing, memory budget), their retries on
// their own queue, worked by MTA_BULK_CONCURRENCY slots of their own (docs/broadcasts.md, fairness).
const bulkDelivery = { ...delivery, scheduleRetry: retryOn(bulkQueue) };
// The record the operator publishes for the managed domains' signatures (also `npm run cli -- managed-dkim`).
const managedDkim = platformDkimRecord(await ensurePlatformKey(db, delivery.secrets, config));
log.info({ name: managedDkim.name, type: managedDkim.type, value: managedDkim.value }, 'mta.managed_dkim_record');
// The delivery sweep ticks in each mta copy (shared/ticker.ts; its job ids make copies' sweeps add a job once). Earlier
// versions ran it as a BullMQ job scheduler of its own queue.
await retireSchedules(config, [], ['delivery-sweep']);
const sweep = ticker({
  name: 'delivery-sweep',
  everyMs: SWEEP_EVERY_MS,
  log,
  run: async () => {
    await sweepDeliveries(db, deliverQueue, new Date(), bulkQueue);
  },
});

// Delivery, which can wait, gives way to the api and to submission on a shared machine: every thread but the
// submission thread is lowered before any job runs (threads made later by the main thread inherit it).
const submissionThread = await submission.tid;
lowerPriority(config.MTA_NICE, log, [submissionThread]);
const workers = [
  createWorker(config, queues.deliver, async (job) => processDelivery(delivery, String(job.data.emailId)), {
    concurrency: config.MTA_CONCURRENCY,
  }),
  createWorker(config, queues.deliverBulk, async (job) => processDelivery(bulkDelivery, String(job.data.emailId)), {
    concurrency: config.MTA_BULK_CONCURRENCY,
  }),
];
for (const w of workers) w.on('failed', (job, err) => log.error({ err, queue: w.name, jobId: job?.id }, 'job.failed'));
sweep.start();

await starting(log, () => submission.listen());
log.info(
  {
    submission: config.SMTP_SUBMISSION_PORT,
    submissionTls: config.SMTP_SUBMISSION_TLS_PORT,
    host: config.SMTP_HOST,
    thread: submissionThread,
  },
  'submission.listening',
);
log.info(
  {
    nice: config.MTA_NICE,
    concurrency: config.MTA_CONCURRENCY,
    bulkConcurrency: config.MTA_BULK_CONCURRENCY,
    perDestination: config.MTA_MAX_PER_DESTINATION,
    port: config.SMTP_DELIVERY_PORT,
  },
  'mta.started',
);

shutdown.ready(async (step) => {
  // Stop taking mail first (sessions in progress finish), then stop taking jobs and let running deliveries finish (each
  // records its outcome), then close the clients.
  step('submission');
  await submission.close();
  step('workers');
  await Promise.all([sweep.stop(), closeQueues(workers)]);
  step('delivery');
  await closeDeliveryDeps(delivery);
  step('queues');
  await closeQueues([deliverQueue, bulkQueue]);
  step('database');
  await db.destroy();
  // Last: what the drain did is still there to scrape until the end.
  step('metrics');
  await metricsListener.close();
});
