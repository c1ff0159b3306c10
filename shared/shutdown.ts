// Two-stage shutdown on SIGTERM/SIGINT: stop taking work, drain, close clients; a second signal exits at once.
// The signals are trapped from the start of a process (trapShutdown, right after its logger), and the stop is
// handed over once everything it closes exists (ready). A signal that arrives while the process is starting (its
// workers may already run jobs) is kept, and the process stops cleanly as soon as it is ready, instead of dying
// in the middle of whatever it had begun.
// A stop that waits on something nothing will ever settle (its event loop empty) would otherwise end the process
// with code 0 and no word: it is logged as `process.stop_stalled`, naming the step it was in, and exits 1.
import type { Logger } from './logger.ts';

/** Names the step a stop has reached: the one a stalled stop is reported in. */
export type StopStep = (name: string) => void;

export interface ShutdownTrap {
  /** The process is started: `stop` runs at the first signal (at once if one came during the start). */
  ready(stop: (step: StopStep) => Promise<void>): void;
}

export function trapShutdown(log: Logger): ShutdownTrap {
  let stop: ((step: StopStep) => Promise<void>) | null = null;
  let requested: string | null = null;
  let stopping = false;
  let step = 'start';
  const run = (signal: string) => {
    stopping = true;
    log.info({ signal }, 'process.stopping');
    // Only an empty event loop emits this: nothing left that could settle what the stop waits for.
    process.on('beforeExit', () => {
      log.error({ step }, 'process.stop_stalled');
      process.exit(1);
    });
    stop!((name) => {
      step = name;
      log.debug({ step }, 'process.stop_step');
    })
      .then(() => {
        log.info('process.stopped');
        process.exit(0);
      })
      .catch((err) => {
        log.error({ err }, 'process.stop_failed');
        process.exit(1);
      });
  };
  const handler = (signal: string) => {
    if (stopping || requested) process.exit(1);
    if (stop) return run(signal);
    requested = signal;
    log.info({ signal }, 'process.stop_requested_while_starting');
  };
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGINT', () => handler('SIGINT'));
  return {
    ready(s) {
      stop = s;
      if (requested) run(requested);
    },
  };
}
