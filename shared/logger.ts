import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { DestinationStream, Logger };

/**
 * The process's JSON logger. `destination` is standard output unless given: tests pass one to read what a process
 * in theirs logs.
 */
export function createLogger(
  config: Pick<Config, 'LOG_LEVEL'>,
  process: string,
  destination?: DestinationStream,
): Logger {
  return pino(
    {
      level: config.LOG_LEVEL,
      base: { process },
      redact: { paths: ['req.headers.authorization', '*.token', '*.password'], censor: '[redacted]' },
    },
    destination,
  );
}
