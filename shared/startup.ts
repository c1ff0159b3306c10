// What every process checks before it serves: PostgreSQL answers and is migrated, Redis answers, its ports are
// free. A failed check ends the start with one line saying what and which setting, and a non-zero exit: a process
// that cannot work must not say it is listening.
import type { Server } from 'node:net';
import { Redis } from 'ioredis';
import type { Knex } from 'knex';
import pg from 'pg';
import type { Logger } from './logger.ts';
import { migrationConfig } from './db/migrate.ts';

export { readConfig } from './config.ts';

export class StartupError extends Error {}

const mask = (url: string) => url.replace(/\/\/([^:@/]+):([^@/]+)@/, '//$1:***@');

/** PostgreSQL at DATABASE_URL answers, its database exists and has every migration. */
export async function checkPostgres(db: Knex, url: string): Promise<void> {
  // One plain connection first: the pool would log its own failure with a stack before we could say ours.
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => {}); // reported below, once
  try {
    await client.connect();
    await client.query('select 1');
  } catch (err) {
    const e = err as { code?: string; message: string };
    if (e.code === '3D000')
      throw new StartupError(
        `the database of DATABASE_URL (${mask(url)}) does not exist: run \`npm run migrate\` (creates and migrates it) or \`npm start\``,
      );
    throw new StartupError(`cannot reach PostgreSQL at DATABASE_URL (${mask(url)}): ${e.message || e.code}`);
  } finally {
    await client.end().catch(() => {});
  }
  const [, pending] = (await db.migrate.list(migrationConfig)) as [unknown[], unknown[]];
  if (pending.length)
    throw new StartupError(
      `the database of DATABASE_URL (${mask(url)}) lacks ${pending.length} migration(s): run \`npm run migrate\``,
    );
}

/** Redis at REDIS_URL answers a PING within a few seconds (one connection, no retries). */
export async function checkRedis(url: string): Promise<void> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 3000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => {}); // the failure is reported below, once
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    throw new StartupError(`cannot reach Redis at REDIS_URL (${mask(url)}): ${(err as Error).message}`);
  } finally {
    redis.disconnect();
  }
}

/** Listens, or fails naming the variable that chose the port when it is taken or not ours to bind. */
export function listen(server: Server, port: number, host: string, variable: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE')
        reject(new StartupError(`port ${port} on ${host} (${variable}) is in use by another program`));
      else if (err.code === 'EACCES')
        reject(new StartupError(`port ${port} on ${host} (${variable}) needs privileges this process lacks`));
      else if (err.code === 'EADDRNOTAVAIL')
        reject(new StartupError(`${host} is not an address of this machine (the host of ${variable})`));
      else reject(err);
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/**
 * Runs a process's start; a StartupError (or a configuration error) ends it with the one line, a fatal log
 * event `startup.failed`, and exit code 1. Anything else is a bug and keeps its stack.
 */
export async function starting<T>(log: Logger, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    if (!(err instanceof StartupError)) throw err;
    log.fatal({ reason: err.message }, 'startup.failed');
    process.stderr.write(`${log.bindings().process ?? 'postwerk'}: ${err.message}\n`);
    process.exit(1);
  }
}
