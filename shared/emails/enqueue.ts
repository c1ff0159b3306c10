// After commit, each accepted email gets a deliver job whose id is the email's id, so enqueueing twice (the
// API after its commit, the sweep after a crash) is harmless. A failed enqueue loses nothing: the row is
// committed and the sweep finds it.
import type { Queue } from 'bullmq';
import type { Logger } from '../logger.ts';

export type EnqueueDelivery = (emailIds: string[]) => Promise<void>;

/** Jobs per addBulk: one Redis pipeline each. */
const MAX_BATCH = 500;

/**
 * Enqueues of concurrent sends share one addBulk (one Redis pipeline, one socket write): ids handed over while a
 * pipeline is in flight, or in the same turn of the event loop, go out together in the next one. Each caller's
 * promise resolves once its own ids are in Redis (or the attempt failed and was logged), as before batching.
 */
export function deliveryEnqueuer(queue: Queue, log: Logger): EnqueueDelivery {
  const waiting: { ids: string[]; done: () => void }[] = [];
  let busy = false;
  let scheduled = false;

  const run = async () => {
    scheduled = false;
    busy = true;
    while (waiting.length > 0) {
      const batch: typeof waiting = [];
      let n = 0;
      while (waiting.length > 0 && (n === 0 || n + waiting[0].ids.length <= MAX_BATCH)) {
        const next = waiting.shift()!;
        batch.push(next);
        n += next.ids.length;
      }
      const emailIds = batch.flatMap((b) => b.ids);
      try {
        await queue.addBulk(emailIds.map((emailId) => ({ name: 'deliver', data: { emailId }, opts: { jobId: emailId } })));
      } catch (err) {
        log.warn({ err, emailIds }, 'delivery.enqueue_failed');
      }
      for (const b of batch) b.done();
    }
    busy = false;
  };

  return (emailIds) => {
    if (emailIds.length === 0) return Promise.resolve();
    const done = new Promise<void>((resolve) => waiting.push({ ids: emailIds, done: resolve }));
    if (!busy && !scheduled) {
      scheduled = true;
      setImmediate(() => void run());
    }
    return done;
  };
}
