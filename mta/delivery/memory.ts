// The message bytes an mta process holds at once. A deliver job keeps its email's bodies, composes the message and
// signs a copy, and may then wait for a session slot (throttle.ts) with all of it in memory; with MTA_CONCURRENCY
// jobs (100 by default) of 40 MB messages that would be gigabytes. Each job takes its email's size from this
// budget before it composes and gives it back when it ends; a message larger than the whole budget runs alone.
// Waiters are served in arrival order, so a large message is not passed over forever by small ones.

export interface ByteBudget {
  /** Waits until `bytes` (at most the whole budget) are free and takes them; answers the release. */
  take(bytes: number): Promise<() => void>;
  /** Bytes taken now (tests and logs). */
  inUse(): number;
}

export function createByteBudget(max: number): ByteBudget {
  let used = 0;
  const waiting: { bytes: number; go: () => void }[] = [];

  function admit(): void {
    while (waiting.length && used + waiting[0].bytes <= max) {
      const next = waiting.shift()!;
      used += next.bytes;
      next.go();
    }
  }

  return {
    async take(bytes) {
      const n = Math.min(Math.max(0, Math.ceil(bytes)), max);
      if (waiting.length === 0 && used + n <= max) used += n;
      else await new Promise<void>((go) => waiting.push({ bytes: n, go }));
      let released = false;
      return () => {
        if (released) return;
        released = true;
        used -= n;
        admit();
      };
    },
    inUse: () => used,
  };
}
