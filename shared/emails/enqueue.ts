// After commit, each accepted email gets a deliver job whose id is the email's id, so enqueueing twice (the
// API after its commit, the sweep after a crash) is harmless. A failed enqueue loses nothing: the row is
// committed and the sweep finds it.
import type { Queue } from 'bullmq';
import type { Logger } from '../logger.ts';

export type EnqueueDelivery = (emailIds: string[]) => Promise<void>;

export function deliveryEnqueuer(queue: Queue, log: Logger): EnqueueDelivery {
  return async (emailIds) => {
    if (emailIds.length === 0) return;
    try {
      await queue.addBulk(emailIds.map((emailId) => ({ name: 'deliver', data: { emailId }, opts: { jobId: emailId } })));
    } catch (err) {
      log.warn({ err, emailIds }, 'delivery.enqueue_failed');
    }
  };
}
