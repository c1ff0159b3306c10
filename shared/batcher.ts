// Hand-overs to Redis in batches: the api's and the submission's deliver jobs (emails/enqueue.ts), the broadcast
// fan-out's, the MX's receive jobs. Under load one round trip (one pipeline, one socket write) carries many items
// instead of one each. Items handed over in the same synchronous run as the first, or while a batch is in flight,
// go together in the next batch. With `delayMs` a batch also waits that long for company: `delayMs` after the first
// item waiting, or after the batch in flight returns if that is later; so under load a batch carries `delayMs` of
// items instead of the one or two of a round trip.

export interface Batcher<T> {
  /**
   * Hands items over; resolves once the last batch carrying them has been sent (or its failure given to `onError`).
   * A caller need not wait: what it handed over goes anyway.
   */
  (items: T[]): Promise<void>;
  /** Sends whatever is waiting at once and waits for it (shutdown). */
  flush(): Promise<void>;
}

export interface BatcherOptions<T> {
  /**
   * At most this many items in one batch (default 500 jobs: one Redis pipeline); a caller's items are split across
   * batches when they are more.
   */
  max?: number;
  /** How long a batch waits for company (0: none; an idle batcher sends at once, in a microtask). */
  delayMs?: number;
  /** A failed batch is reported here, never thrown at the callers; the next batch still goes. */
  onError: (err: unknown, batch: T[]) => void;
}

export function batcher<T>(send: (batch: T[]) => Promise<unknown>, options: BatcherOptions<T>): Batcher<T> {
  const { max = 500, onError } = options;
  const delayMs = options.delayMs ?? 0;
  const waiting: { items: T[]; done: () => void }[] = [];
  let busy: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;

  // The next batch off the head of the queue, and the callers whose last items it carries.
  const take = () => {
    const batch: T[] = [];
    const finished: (() => void)[] = [];
    while (waiting.length > 0 && batch.length < max) {
      const head = waiting[0];
      const room = max - batch.length;
      if (head.items.length > room) {
        batch.push(...head.items.slice(0, room));
        head.items = head.items.slice(room);
      } else {
        batch.push(...head.items);
        finished.push(head.done);
        waiting.shift();
      }
    }
    return { batch, finished };
  };

  // One batch, or (without a delay, or at flush()) until nothing waits. `busy` is cleared in the same synchronous
  // step as the last check, so an item handed over at any moment is either taken by this loop or schedules the next.
  const run = async (drain: boolean) => {
    await null;
    let more = true;
    while (more && waiting.length > 0) {
      const { batch, finished } = take();
      try {
        await send(batch);
      } catch (err) {
        onError(err, batch);
      }
      for (const done of finished) done();
      more = drain || delayMs === 0;
    }
    busy = null;
    schedule();
  };
  const start = (drain = false) => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (!busy) busy = run(drain);
    return busy;
  };
  const schedule = () => {
    if (busy || timer || waiting.length === 0) return;
    if (delayMs === 0) void start();
    else {
      timer = setTimeout(start, delayMs);
      timer.unref();
    }
  };

  const handOver = (items: T[]) => {
    if (items.length === 0) return Promise.resolve();
    const done = new Promise<void>((resolve) => waiting.push({ items, done: resolve }));
    schedule();
    return done;
  };
  return Object.assign(handOver, {
    async flush() {
      while (waiting.length > 0 || busy) await start(true);
    },
  });
}
