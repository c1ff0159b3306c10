// After commit, each accepted email gets a deliver job whose id is the email's id, so enqueueing twice (the
// API after its commit, the sweep after a crash) is harmless. A failed enqueue loses nothing: the row is
// committed and the sweep finds it.
import type { Queue } from 'bullmq';
import type { Logger } from '../logger.ts';
import { batcher, type Batcher } from '../batcher.ts';

export type EnqueueDelivery = (emailIds: string[]) => Promise<void>;

export interface Enqueuer extends EnqueueDelivery {
  /** Hands over whatever is waiting and waits for it (shutdown). */
  flush(): Promise<void>;
}

/**
 * Enqueues share one addBulk (one Redis pipeline, one socket write; BullMQ's cost per job falls from ~0.15 ms
 * alone to ~0.04 ms in fours), as shared/batcher.ts gathers them. `delayMs = 0` (the default): each caller resolves
 * once its own ids are in Redis (or the failure is logged). `delayMs > 0` (the api, api/main.ts): a caller does not
 * wait; its ids go out within `delayMs` (after the pipeline in flight, if one is), together with everyone else's. A
 * crash in that window loses only the enqueue: the email is committed and the mta's sweep enqueues it (CONTRACT:
 * a lost enqueue is recovered after 10 s).
 */
export function deliveryEnqueuer(queue: Queue, log: Logger, options: { delayMs?: number } = {}): Enqueuer {
  const delayMs = options.delayMs ?? 0;
  const batches: Batcher<string> = batcher(
    (emailIds) =>
      queue.addBulk(emailIds.map((emailId) => ({ name: 'deliver', data: { emailId }, opts: { jobId: emailId } }))),
    { delayMs, onError: (err, emailIds) => log.warn({ err, emailIds }, 'delivery.enqueue_failed') },
  );
  const enqueue = (emailIds: string[]) => {
    const sent = batches(emailIds);
    return delayMs === 0 ? sent : Promise.resolve();
  };
  return Object.assign(enqueue, { flush: () => batches.flush() });
}
