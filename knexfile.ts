// For tools that look for a knexfile; the processes themselves migrate through shared/db/migrate.ts.
import { loadConfig } from './shared/config.ts';
import { migrationConfig } from './shared/db/migrate.ts';

const config = loadConfig();

export default {
  client: 'pg',
  connection: config.DATABASE_URL,
  migrations: migrationConfig,
};
