import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Knex } from 'knex';
import pg from 'pg';
import type { Db } from './knex.ts';
import { codePath, compiled } from '../layout.ts';

/** The migrations of the running layout: migrations/*.ts under tsx, dist/migrations/*.js when compiled. */
export const migrationsDirectory = codePath('migrations');

/**
 * Each migration is named by its source file (`20261122040000_create_teams.ts`) in both layouts. knex records
 * that name in knex_migrations and refuses a database that has applied a migration it cannot find ("the migration
 * directory is corrupt"): a compiled run must see the names a tsx run wrote, and the other way round, so a
 * database migrated by either is up to date for the other.
 */
const migrationSource: Knex.MigrationSource<string> = {
  async getMigrations() {
    const extension = compiled ? '.js' : '.ts';
    const files = (await readdir(migrationsDirectory)).filter((f) => f.endsWith(extension) && !f.endsWith('.d.ts'));
    return files.map((f) => f.slice(0, -extension.length) + '.ts').sort();
  },
  getMigrationName: (name) => name,
  getMigration: (name) => {
    const file = path.join(migrationsDirectory, compiled ? name.replace(/\.ts$/, '.js') : name);
    return import(pathToFileURL(file).href);
  },
};

export const migrationConfig = { migrationSource, tableName: 'knex_migrations' };

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
