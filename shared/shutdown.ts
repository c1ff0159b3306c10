import type { Logger } from './logger.ts';

/** Two-stage shutdown on SIGTERM/SIGINT: stop taking work, drain, close clients; a second signal exits at once. */
export function onShutdown(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal }, 'process.stopping');
    stop()
      .then(() => {
        log.info('process.stopped');
        process.exit(0);
      })
      .catch((err) => {
        log.error({ err }, 'process.stop_failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGINT', () => handler('SIGINT'));
}
