// `npm run cli -- <command> [--flags]`: JSON on stdout, errors as JSON on stderr with a non-zero exit (2 for a
// mistake in the call or the input, 1 for our own failure), never a stack trace. `--help` anywhere: the help.
// What only a running command needs (the configuration, the database, the startup checks: about half the CLI's
// start) is imported after the help and the flags' check, which answer without it (0.3 s of CPU instead of 0.6).
import { checkFlags } from './command.ts';
import { cliCommands, overview, parseArgs, usage, UsageError } from './commands.ts';

function fail(error: string, code: number, extra: Record<string, unknown> = {}): never {
  process.stderr.write(JSON.stringify({ error, ...extra }) + '\n');
  process.exit(code);
}

const { command: name, flags, help } = parseArgs(process.argv.slice(2));
const command = cliCommands[name];
if (help && (!name || name === 'help')) {
  process.stdout.write(overview());
  process.exit(0);
}
if (!command) fail(`unknown command "${name}"`, 2, { commands: Object.keys(cliCommands) });
if (help) {
  process.stdout.write(usage(name, command));
  process.exit(0);
}
try {
  checkFlags(name, command, flags);
} catch (err) {
  fail((err as UsageError).message, 2);
}

const [{ ConfigError, loadConfig }, { createDb }, { ensureDatabase, migrateLatest }, { ServiceError }, startup] =
  await Promise.all([
    import('../config.ts'),
    import('../db/knex.ts'),
    import('../db/migrate.ts'),
    import('../errors.ts'),
    import('../startup.ts'),
  ]);
const { checkPostgres, StartupError } = startup;
try {
  const config = loadConfig();
  await ensureDatabase(config.DATABASE_URL).catch((err: Error) => {
    throw new StartupError(`cannot reach PostgreSQL at DATABASE_URL: ${err.message}`);
  });
  const db = createDb(config, { min: 0, max: 2 });
  try {
    await migrateLatest(db);
    await checkPostgres(db, config.DATABASE_URL);
    process.stdout.write(JSON.stringify(await command.run(db, flags, config), null, 2) + '\n');
  } finally {
    await db.destroy();
  }
} catch (err) {
  const known = [UsageError, ServiceError, ConfigError, StartupError].some((k) => err instanceof k);
  fail(known ? (err as Error).message : `unexpected: ${(err as Error).message}`, known ? 2 : 1);
}
