import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import type { Config } from '../config.ts';

export type Db = Knex;
export type { Knex };

// int8 (count(*), sums) as numbers: every count we keep fits in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

/**
 * How long a pooled connection may sit idle before it is closed. Not knex's 30 s: a burst after a quiet minute would
 * open its connections anew, each a new PostgreSQL backend to start and warm (its catalog caches, every prepared
 * statement planned again), all while the burst waits; on a busy machine that was a few hundred ms on the first
 * requests (bench/README.md, the broadcasts suite's round starts). Idle connections cost PostgreSQL little.
 */
export const DB_IDLE_MS = 10 * 60_000;

export function createDb(
  config: Pick<Config, 'DATABASE_URL'>,
  pool: { min: number; max: number; idleTimeoutMillis?: number } = { min: 0, max: 10 },
): Db {
  return knexFactory({
    client: 'pg',
    connection: config.DATABASE_URL,
    pool: { idleTimeoutMillis: DB_IDLE_MS, ...pool },
  });
}
