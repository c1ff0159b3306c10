// The inbound process: wiring only. Runs the MX listener (inbound/mx/: RCPT checks, durable store before the
// 250) in a thread of its own, and the receive pipeline (inbound/receive/: receive jobs from queues.receive and the
// receive sweep) on the main thread at INBOUND_NICE.
import { checkPostgres, checkRedis, readConfig, starting } from '../shared/startup.ts';
import { createLogger } from '../shared/logger.ts';
import { createDb } from '../shared/db/knex.ts';
import { createFsBlobStore } from '../shared/blobs.ts';
import { closeQueues, createQueue, createWorker, queues } from '../shared/queue.ts';
import { secretsKey } from '../shared/secrets.ts';
import { tlsCredentials } from '../shared/tls/certificate.ts';
import { trapShutdown } from '../shared/shutdown.ts';
import { startMxThread } from './mx/in-thread.ts';
import { lowerPriority } from '../shared/priority.ts';
import { processReceived, type ReceiveDeps } from './receive/job.ts';
import { createAuthenticator } from './receive/authenticate.ts';
import { createClamdScanner } from '../shared/clamd/client.ts';
import { createResolver } from '../shared/dns/resolver.ts';
import { sweepReceived, SWEEP_EVERY_MS } from './receive/sweep.ts';
import { createRegistry } from '../shared/metrics/registry.ts';
import { inboundMetrics } from '../shared/metrics/inbound.ts';
import { measured } from '../shared/metrics/jobs.ts';
import { queueMetrics } from '../shared/metrics/queues.ts';
import { serveMetrics } from '../shared/metrics/server.ts';

const config = readConfig('inbound');
const log = createLogger(config, 'inbound');
// From here on a SIGTERM stops the process cleanly, even one that comes while it is starting.
const shutdown = trapShutdown(log);
// The receive jobs' connections; the MX thread has its own (10).
const db = createDb(config, { min: 0, max: Math.max(10, config.INBOUND_CONCURRENCY) });
const registry = createRegistry();
const metrics = inboundMetrics(registry);
const tls = await tlsCredentials(config, config.PLATFORM_INBOUND_HOST);
if (tls.selfSigned) log.warn('mx.self_signed_certificate: set SMTP_TLS_KEY_FILE and SMTP_TLS_CERT_FILE in production');
// Accepting, which a sending server waits on, runs in a thread of its own at the process's priority (made now, before
// any lowering, so that it inherits the process's); receive jobs can wait.
const mx = startMxThread({ config, tls, metrics, log });
// Metrics (docs/observability.md): served on METRICS_INBOUND_PORT, before any job runs (a port in use ends the start).
const metricsListener = await starting(log, async () => {
  await checkPostgres(db, config.DATABASE_URL);
  await checkRedis(config.REDIS_URL);
  return serveMetrics(config, 'inbound', registry, log);
});
const blobs = createFsBlobStore(config.BLOB_DIR);
const secrets = secretsKey(config);

const receiveQueue = createQueue(config, queues.receive);
const sweepQueue = createQueue(config, queues.receiveSweep);
// The queue gauges are read from Redis at each scrape.
queueMetrics(registry, [receiveQueue, sweepQueue], log);
// One schedule however many inbound copies run: BullMQ keeps a single scheduler per id.
await sweepQueue.upsertJobScheduler(
  'sweep',
  { every: SWEEP_EVERY_MS },
  { name: 'sweep', data: {}, opts: { removeOnComplete: true, removeOnFail: 100 } },
);
// No CLAMD_ADDRESS: mail is received unscanned, said at every start and by the api's /ready.
const scanner = config.CLAMD_ADDRESS ? createClamdScanner(config.CLAMD_ADDRESS) : null;
if (!scanner) log.warn('receive.scanning_off: set CLAMD_ADDRESS to scan received mail with clamd');
const authenticator = createAuthenticator({
  dns: createResolver({ servers: config.DNS_SERVERS }),
  authservId: config.PLATFORM_INBOUND_HOST,
});
const receiveDeps: ReceiveDeps = { db, blobs, log, secrets, scanner, authenticator };
// Receive jobs give way to accepting on a shared machine: every thread but the MX's is lowered before any job runs
// (threads made later by the main thread inherit it).
const mxThread = await mx.tid;
lowerPriority(config.INBOUND_NICE, log, [mxThread]);
const workers = [
  createWorker(
    config,
    queues.receive,
    async (job) => measured(metrics.receive, () => processReceived(receiveDeps, String(job.data.messageId))),
    { concurrency: config.INBOUND_CONCURRENCY },
  ),
  createWorker(config, queues.receiveSweep, async () => ({ enqueued: await sweepReceived(db, receiveQueue) })),
];
for (const w of workers) w.on('failed', (job, err) => log.error({ err, queue: w.name, jobId: job?.id }, 'job.failed'));

await starting(log, () => mx.listen());
log.info(
  { mx: config.MX_PORT, host: config.MX_HOST, maxBytes: config.INBOUND_MAX_MESSAGE_BYTES, thread: mxThread },
  'mx.listening',
);

shutdown.ready(async (step) => {
  // Stop taking mail first (sessions in progress finish and get their 250 or a retry), then stop taking jobs
  // receive jobs and let running ones finish, then close the clients.
  step('mx');
  await mx.close();
  step('workers');
  await closeQueues(workers);
  step('queues');
  await closeQueues([receiveQueue, sweepQueue]);
  step('database');
  await db.destroy();
  step('metrics');
  await metricsListener.close();
});
