// Work a process repeats on a clock: the release of scheduled emails, the sweeps that start broadcast fan-outs, check
// domains and build exports (worker), the delivery sweep (mta), the metrics rollup. Each runs in the process that does
// it, one run at a time, at the multiples of its period on the wall clock (a run that overruns skips the instants it
// missed). They were BullMQ job schedulers: one job a tick through Redis (about 65 commands each, 290 a second for an
// idle platform) to run one SQL statement. Every such work is safe to run in several copies at once (leases, SKIP
// LOCKED, job ids), so a copy of the process each does its own ticks.
import type { Logger } from './logger.ts';

export interface Ticker {
  start(): void;
  /** Lets a running pass finish; no new one starts. */
  stop(): Promise<void>;
}

export interface TickerOptions {
  /** Named in the log line of a failed run. */
  name: string;
  everyMs: number;
  /**
   * One pass. It may answer `{ againInMs }` to run again that soon instead of at the next multiple of `everyMs` (the
   * rollup does while committed events wait behind a running transaction).
   */
  run: () => Promise<void | { againInMs: number }>;
  log: Logger;
}

/** Milliseconds from `now` to the next multiple of `everyMs` (a full period when `now` is one). */
export function untilNextTick(everyMs: number, now = Date.now()): number {
  return everyMs - (now % everyMs);
}

export function ticker(options: TickerOptions): Ticker {
  const { name, everyMs, run, log } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  // The instant the next run is for. A timer may fire a millisecond before it by Date.now() (timers keep their own
  // clock): the run after is still the next multiple after this one, not the one a millisecond away.
  let due = 0;

  const schedule = (wait?: number) => {
    const now = Date.now();
    due = wait === undefined ? Math.max(now, due) + untilNextTick(everyMs, Math.max(now, due)) : now + wait;
    timer = setTimeout(() => (running = pass()), due - now);
  };

  const pass = async () => {
    let wait: number | undefined;
    try {
      wait = (await run())?.againInMs;
    } catch (err) {
      log.error({ err, ticker: name }, 'ticker.failed');
    }
    if (!stopped) schedule(wait);
  };

  return {
    start() {
      if (timer || running) return;
      schedule();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
