// The worker process: wiring only. Runs the background jobs of the platform from their queues.
import { loadConfig } from '../../shared/config.ts';
import { createLogger } from '../../shared/logger.ts';
import { createDb } from '../../shared/db/knex.ts';
import { createQueue, createWorker, queues } from '../../shared/queue.ts';
import { onShutdown } from '../../shared/shutdown.ts';
import { runMaintenance } from './maintenance.ts';

const config = loadConfig();
const log = createLogger(config, 'worker');
const db = createDb(config);

const maintenanceQueue = createQueue(config, queues.maintenance);
// One schedule however many workers run: BullMQ keeps a single scheduler per id.
await maintenanceQueue.upsertJobScheduler('hourly', { every: 3600_000 }, { name: 'maintenance', data: {} });

const workers = [
  createWorker(config, queues.maintenance, async () => {
    const removed = await runMaintenance(db);
    log.info({ removed }, 'maintenance.done');
    return removed;
  }),
];
for (const w of workers) w.on('failed', (job, err) => log.error({ err, queue: w.name, jobId: job?.id }, 'job.failed'));
log.info({ queues: workers.map((w) => w.name) }, 'worker.started');

onShutdown(log, async () => {
  // Stop claiming, let running jobs finish, then close the clients.
  await Promise.all(workers.map((w) => w.close()));
  await maintenanceQueue.close();
  await db.destroy();
});
