// `npm run cli -- <command> [--flags]`: JSON on stdout, errors as JSON on stderr with a non-zero exit.
import { ConfigError, loadConfig } from '../config.ts';
import { createDb } from '../db/knex.ts';
import { migrateLatest } from '../db/migrate.ts';
import { ServiceError } from '../errors.ts';
import { isUuid } from '../ids.ts';
import { commands, parseArgs, UsageError } from './commands.ts';

const { command, flags } = parseArgs(process.argv.slice(2));
const run = commands[command];
if (!run) {
  process.stderr.write(
    JSON.stringify({ error: `unknown command "${command}"`, commands: Object.keys(commands) }) + '\n',
  );
  process.exit(2);
}
if (typeof flags.team === 'string' && !isUuid(flags.team)) {
  process.stderr.write(JSON.stringify({ error: '--team must be a team id (uuid)' }) + '\n');
  process.exit(2);
}

const config = loadConfig();
const db = createDb(config, { min: 0, max: 2 });
try {
  await migrateLatest(db);
  const result = await run(db, flags, config);
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
} catch (err) {
  const known = err instanceof UsageError || err instanceof ServiceError || err instanceof ConfigError;
  process.stderr.write(
    JSON.stringify({ error: known ? (err as Error).message : `unexpected: ${(err as Error).message}` }) + '\n',
  );
  process.exitCode = known ? 2 : 1;
} finally {
  await db.destroy();
}
