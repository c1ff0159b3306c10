import { fileURLToPath } from 'node:url';
import path from 'node:path';
import pg from 'pg';
import type { Db } from './knex.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const migrationConfig = {
  directory: path.join(root, 'migrations'),
  loadExtensions: ['.ts'],
  tableName: 'knex_migrations',
};

/** Applies every pending migration; safe to run from several processes at once (knex takes a lock). */
export async function migrateLatest(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest(migrationConfig)) as [number, string[]];
  return applied;
}

/** Creates the database named in `url` when it does not exist yet (first start on a fresh server). */
export async function ensureDatabase(url: string): Promise<boolean> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!/^[A-Za-z0-9_-]{1,63}$/.test(name)) throw new Error(`unsupported database name: ${name}`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  // A plain client, not a knex pool: a refused connection is one error to report, not a pool's logged stack.
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  try {
    await client.connect();
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rows.length > 0) return false;
    await client.query(`create database "${name}"`);
    return true;
  } finally {
    await client.end().catch(() => {});
  }
}
