// The per-destination cap: at most `max` SMTP sessions at once to one MX host from this process, however many
// jobs want it. Receivers count connections per sending IP and answer 421 past their limit; staying under it
// keeps us out of their penalty box. Waiters are served in arrival order.

export interface Throttle {
  run<T>(key: string, work: () => Promise<T>): Promise<T>;
  /** Sessions running now for `key` (tests and logs). */
  active(key: string): number;
}

export function createThrottle(max: number): Throttle {
  const running = new Map<string, number>();
  const waiting = new Map<string, (() => void)[]>();

  async function acquire(key: string): Promise<void> {
    const n = running.get(key) ?? 0;
    if (n < max) {
      running.set(key, n + 1);
      return;
    }
    // The slot is handed over by release(), which keeps the count as it is.
    await new Promise<void>((resolve) => {
      const queue = waiting.get(key);
      if (queue) queue.push(resolve);
      else waiting.set(key, [resolve]);
    });
  }

  function release(key: string): void {
    const queue = waiting.get(key);
    const next = queue?.shift();
    if (queue && queue.length === 0) waiting.delete(key);
    if (next) return next();
    const n = (running.get(key) ?? 1) - 1;
    if (n <= 0) running.delete(key);
    else running.set(key, n);
  }

  return {
    async run(key, work) {
      await acquire(key);
      try {
        return await work();
      } finally {
        release(key);
      }
    },
    active: (key) => running.get(key) ?? 0,
  };
}
