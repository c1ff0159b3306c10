import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import type { Config } from '../config.ts';

export type Db = Knex;
export type { Knex };

// int8 (count(*), sums) as numbers: every count we keep fits in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export function createDb(config: Pick<Config, 'DATABASE_URL'>, pool = { min: 0, max: 10 }): Db {
  return knexFactory({ client: 'pg', connection: config.DATABASE_URL, pool });
}
