import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, process: string): Logger {
  return pino({
    level: config.LOG_LEVEL,
    base: { process },
    redact: { paths: ['req.headers.authorization', '*.token', '*.password'], censor: '[redacted]' },
  });
}
