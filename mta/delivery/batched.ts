// One statement for the work of many jobs, the way the mta commits records (group-commit.ts) and takes leases
// (lease.ts createLeaseGroup): what arrives while a batch's statement runs waits and goes together in the next one,
// so under load a job costs a fraction of a statement (and of a WAL flush), and alone it waits for nothing but a turn
// of the event loop. One batch at a time per process. A failed batch is run again one item at a time, so one bad item
// (or a deadlock with another mta copy's statement) fails only its own job.
import type { Logger } from '../../shared/logger.ts';

export interface BatchOptions<I, O> {
  /** Runs a batch: answers one result per item, in the batch's order. */
  run(batch: I[]): Promise<O[]>;
  /** At most this many items in one batch. */
  max: number;
  log: Logger;
  /** The warning logged when a batch fails and its items are run one by one. */
  failedEvent: string;
  /** Items of one key never share a batch: the later waits for the next (first come, first served otherwise). */
  key?(item: I): string;
}

interface Waiting<I, O> {
  item: I;
  resolve: (result: O) => void;
  reject: (err: unknown) => void;
}

export function batched<I, O>(o: BatchOptions<I, O>): (item: I) => Promise<O> {
  const queue: Waiting<I, O>[] = [];
  // Set from the first item of a batch until its statement ends: the items of the same turn of the event loop
  // (setImmediate) and those arriving during a statement join the next batch.
  let flushing = false;

  /** The next batch: the first `max` waiting items, of distinct keys when items have keys. */
  function nextBatch(): Waiting<I, O>[] {
    if (!o.key) return queue.splice(0, o.max);
    const keys = new Set<string>();
    const batch: Waiting<I, O>[] = [];
    for (let i = 0; i < queue.length && batch.length < o.max;) {
      const key = o.key(queue[i].item);
      if (keys.has(key)) i++;
      else {
        keys.add(key);
        batch.push(...queue.splice(i, 1));
      }
    }
    return batch;
  }

  async function flush(): Promise<void> {
    try {
      while (queue.length) {
        const batch = nextBatch();
        try {
          const results = await o.run(batch.map((w) => w.item));
          batch.forEach((w, i) => w.resolve(results[i]));
        } catch (err) {
          if (batch.length === 1) {
            batch[0].reject(err);
            continue;
          }
          o.log.warn({ err, items: batch.length }, o.failedEvent);
          for (const w of batch) await o.run([w.item]).then(([result]) => w.resolve(result), w.reject);
        }
      }
    } finally {
      flushing = false;
    }
  }

  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (flushing) return;
      flushing = true;
      setImmediate(() => void flush());
    });
}
