// `npm run migrate`: creates the database when it does not exist and applies every pending migration.
import { readConfig } from '../startup.ts';
import { createDb } from './knex.ts';
import { ensureDatabase, migrateLatest } from './migrate.ts';

const config = readConfig('migrate');
try {
  await ensureDatabase(config.DATABASE_URL);
} catch (err) {
  process.stderr.write(
    JSON.stringify({ error: `cannot reach PostgreSQL at DATABASE_URL: ${(err as Error).message}` }) + '\n',
  );
  process.exit(1);
}
const db = createDb(config);
try {
  const applied = await migrateLatest(db);
  process.stdout.write(JSON.stringify({ applied }) + '\n');
} finally {
  await db.destroy();
}
