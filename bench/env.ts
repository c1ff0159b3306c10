// Imported first by every bench entry point: the bench reads the configuration as every entry point does (the
// environment, then the env file). Its PostgreSQL server and Redis are those of DATABASE_URL and REDIS_URL,
// unless TEST_DATABASE_URL (an admin URL on the server where it makes its databases) or TEST_REDIS_URL name others.
import { readConfig } from '../shared/startup.ts';

const config = readConfig('bench');
const admin = new URL(config.DATABASE_URL);
admin.pathname = '/postgres';
process.env.TEST_DATABASE_URL ??= admin.toString();
process.env.TEST_REDIS_URL ??= config.REDIS_URL;

/** A bench setting from the environment: a number of at least `min`, else `fallback` when unset. */
export function envNumber(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number >= ${min}, got "${raw}"`);
  return n;
}
