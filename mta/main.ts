// The mta process: wiring only. Runs the delivery pipeline (mta/delivery/, see mta/README.md): deliver jobs
// from queues.deliver and the delivery sweep. The SMTP submission listeners land with the sending area.
import { loadConfig } from '../shared/config.ts';
import { createLogger } from '../shared/logger.ts';
import { createDb } from '../shared/db/knex.ts';
import { createFsBlobStore } from '../shared/blobs.ts';
import { createQueue, createWorker, queues } from '../shared/queue.ts';
import { onShutdown } from '../shared/shutdown.ts';
import { closeDeliveryDeps, createDeliveryDeps } from './delivery/deps.ts';
import { processDelivery } from './delivery/job.ts';
import { sweepDeliveries, SWEEP_EVERY_MS } from './delivery/sweep.ts';

const config = loadConfig();
const log = createLogger(config, 'mta');
// Each running deliver job holds at most a few connections at once (lease, record, compose).
const db = createDb(config, { min: 0, max: Math.max(10, Math.ceil(config.MTA_CONCURRENCY / 2)) });
await db.raw('select 1');
const blobs = createFsBlobStore(config.BLOB_DIR);

const deliverQueue = createQueue(config, queues.deliver);
const sweepQueue = createQueue(config, queues.deliverySweep);
const delivery = createDeliveryDeps(config, { db, blobs, log }, { queue: deliverQueue });
// One schedule however many mta copies run: BullMQ keeps a single scheduler per id.
await sweepQueue.upsertJobScheduler('sweep', { every: SWEEP_EVERY_MS }, { name: 'sweep', data: {}, opts: { removeOnComplete: true, removeOnFail: 100 } });

const workers = [
  createWorker(config, queues.deliver, async (job) => processDelivery(delivery, String(job.data.emailId)), { concurrency: config.MTA_CONCURRENCY }),
  createWorker(config, queues.deliverySweep, async () => ({ enqueued: await sweepDeliveries(db, deliverQueue) })),
];
for (const w of workers) w.on('failed', (job, err) => log.error({ err, queue: w.name, jobId: job?.id }, 'job.failed'));
log.info({ concurrency: config.MTA_CONCURRENCY, perDestination: config.MTA_MAX_PER_DESTINATION, port: config.SMTP_DELIVERY_PORT }, 'mta.started');

onShutdown(log, async () => {
  // Stop claiming jobs and let running deliveries finish (each records its outcome), then close the clients.
  await Promise.all(workers.map((w) => w.close()));
  await closeDeliveryDeps(delivery);
  await Promise.all([deliverQueue.close(), sweepQueue.close()]);
  await db.destroy();
});
