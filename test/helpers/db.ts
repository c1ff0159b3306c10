// Each test file gets its own PostgreSQL database, copied from a template that is migrated once per set of
// migrations (an advisory lock keeps parallel test files from migrating it twice).
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import knexFactory from 'knex';
import { migrateLatest, migrationsDirectory } from '../../shared/db/migrate.ts';

export const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * What the tests make once per machine (the test keys, the SMTP certificate): `find` it, else make it under an
 * advisory lock, so test files asking at once make it once (`find` runs again under the lock: another file may
 * have made it meanwhile).
 */
export async function onceOnMachine<T>(
  lock: number,
  find: () => Promise<T | undefined>,
  make: () => Promise<T>,
): Promise<T> {
  const found = await find();
  if (found !== undefined) return found;
  const admin = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  try {
    return await admin.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(?)', [lock]);
      return (await find()) ?? (await make());
    });
  } finally {
    await admin.destroy();
  }
}

function urlFor(name: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

function templateName(): string {
  const files = readdirSync(migrationsDirectory).sort().join('\n');
  return `pw_tpl_${createHash('sha256').update(files).digest('hex').slice(0, 12)}`;
}

async function ensureTemplate(admin: ReturnType<typeof knexFactory>, name: string): Promise<void> {
  await admin.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(424242)');
    const found = await trx.raw('select 1 from pg_database where datname = ?', [name]);
    if (found.rows.length) return;
    await admin.raw(`create database "${name}_building"`).catch(async () => {
      await admin.raw(`drop database if exists "${name}_building"`);
      await admin.raw(`create database "${name}_building"`);
    });
    const db = knexFactory({ client: 'pg', connection: urlFor(`${name}_building`), pool: { min: 0, max: 1 } });
    try {
      await migrateLatest(db);
    } finally {
      await db.destroy();
    }
    await admin.raw(`alter database "${name}_building" rename to "${name}"`);
  });
}

/**
 * A fresh migrated database; `drop()` removes it. `asyncCommit`: its sessions commit with synchronous_commit off
 * (the tests' platforms; docs/testing.md), the benchmarks' keep the server's setting.
 */
export async function createTestDatabase(
  options: { asyncCommit?: boolean } = {},
): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const admin = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 2 } });
  const template = templateName();
  const name = `pw_t_${randomBytes(6).toString('hex')}`;
  try {
    await ensureTemplate(admin, template);
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.raw(`create database "${name}" template "${template}"`);
        break;
      } catch (err) {
        // Another file copying the same template at this instant: wait and try again.
        if (attempt > 40 || !/being accessed by other users/.test((err as Error).message)) throw err;
        await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
      }
    }
    if (options.asyncCommit) await admin.raw(`alter database "${name}" set synchronous_commit = off`);
  } finally {
    await admin.destroy();
  }
  return {
    url: urlFor(name),
    name,
    drop: async () => {
      const a = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
      try {
        await a.raw(`drop database if exists "${name}" with (force)`);
      } finally {
        await a.destroy();
      }
    },
  };
}
