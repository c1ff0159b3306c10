// Two-stage shutdown on SIGTERM/SIGINT: stop taking work, drain, close clients; a second signal exits at once.
// The signals are trapped from the start of a process (trapShutdown, right after its logger), and the stop is
// handed over once everything it closes exists (ready). A signal that arrives while the process is starting (its
// workers may already run jobs) is kept, and the process stops cleanly as soon as it is ready, instead of dying
// in the middle of whatever it had begun.
import type { Logger } from './logger.ts';

export interface ShutdownTrap {
  /** The process is started: `stop` runs at the first signal (at once if one came during the start). */
  ready(stop: () => Promise<void>): void;
}

export function trapShutdown(log: Logger): ShutdownTrap {
  let stop: (() => Promise<void>) | null = null;
  let requested: string | null = null;
  let stopping = false;
  const run = (signal: string) => {
    stopping = true;
    log.info({ signal }, 'process.stopping');
    stop!()
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
