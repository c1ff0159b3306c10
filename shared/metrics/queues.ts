// Queue depths and the age of the oldest waiting job, read from Redis when Prometheus scrapes (collect() callbacks:
// one getJobCounts and one peek at the oldest waiting job per queue and scrape), never on the path of a job. A
// process reports the queues it works, so several copies report the same numbers (take max() across them).
import type { Queue } from 'bullmq';
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../logger.ts';

const STATES = ['waiting', 'active', 'delayed', 'prioritized', 'failed'] as const;
/** A scrape does not wait longer on Redis than this: the queue series are left out instead. */
const REDIS_TIMEOUT_MS = 2000;

function bounded<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${REDIS_TIMEOUT_MS} ms`)), REDIS_TIMEOUT_MS);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Seconds since the oldest waiting job became due (added, or its delay ended); 0 when none waits. */
async function oldestWaitingAge(queue: Queue, now: number): Promise<number> {
  const [job] = await queue.getJobs(['wait'], 0, 0, true);
  if (!job) return 0;
  return Math.max(0, (now - (job.timestamp + (job.delay ?? 0))) / 1000);
}

export function queueMetrics(registry: Registry, queues: Queue[], log: Logger): void {
  const failed = (err: unknown) => log.warn({ err }, 'metrics.queue_read_failed');
  new Gauge({
    name: 'postwerk_queue_jobs',
    help: 'Jobs in each queue this process works, by state (waiting, active, delayed, prioritized, failed), read at scrape',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      try {
        const counts = await bounded(Promise.all(queues.map((q) => q.getJobCounts(...STATES))));
        queues.forEach((q, i) => {
          for (const state of STATES) this.set({ queue: q.name, state }, counts[i][state] ?? 0);
        });
      } catch (err) {
        failed(err);
      }
    },
  });
  new Gauge({
    name: 'postwerk_queue_oldest_waiting_age_seconds',
    help: 'Seconds the oldest waiting job of each queue this process works has been due (0: none waits), read at scrape',
    labelNames: ['queue'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      try {
        const now = Date.now();
        const ages = await bounded(Promise.all(queues.map((q) => oldestWaitingAge(q, now))));
        queues.forEach((q, i) => this.set({ queue: q.name }, ages[i]));
      } catch (err) {
        failed(err);
      }
    },
  });
}
