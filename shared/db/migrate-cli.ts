import { loadConfig } from '../config.ts';
import { createDb } from './knex.ts';
import { ensureDatabase, migrateLatest } from './migrate.ts';

const config = loadConfig();
await ensureDatabase(config.DATABASE_URL);
const db = createDb(config);
try {
  const applied = await migrateLatest(db);
  process.stdout.write(JSON.stringify({ applied }) + '\n');
} finally {
  await db.destroy();
}
