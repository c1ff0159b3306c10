// What every start goes through before a process runs, under `npm start` (main.ts) and under systemd
// (postwerk-setup.service runs setup-cli.ts) alike: the secrets key file, Redis and PostgreSQL reachable, the
// database, its migrations, and on an empty database the first team. Each step does nothing once done, so it runs
// on every start (and applies an upgrade's migrations).
import type { Config } from '../config.ts';
import { createDb } from '../db/knex.ts';
import { ensureDatabase, migrateLatest } from '../db/migrate.ts';
import type { Logger } from '../logger.ts';
import { ensureSecretsKeyFile } from '../secrets.ts';
import { checkRedis, StartupError } from '../startup.ts';
import { firstRun, type FirstTeam } from './first-run.ts';
import { ensurePlatformSender } from '../accounts/platform-sender.ts';
import { createResolver } from '../dns/resolver.ts';
import { secretsKey } from '../secrets.ts';

/** Runs the steps; answers the first team with its key when this run made it, null on every later run. */
export async function setUp(config: Config, log: Logger): Promise<FirstTeam | null> {
  if (ensureSecretsKeyFile(config)) log.info({ file: config.SECRETS_KEY_FILE }, 'secrets_key.created');
  await checkRedis(config.REDIS_URL);
  await ensureDatabase(config.DATABASE_URL).catch((err: Error) => {
    throw new StartupError(`cannot reach PostgreSQL at DATABASE_URL: ${err.message}`);
  });
  const db = createDb(config, { min: 0, max: 2 });
  try {
    const applied = await migrateLatest(db);
    log.info({ applied }, 'migrations.applied');
    const first = await firstRun(db, config.FIRST_TEAM_NAME, config.MANAGED_DOMAIN_HOST);
    // The sender of the account mails (PLATFORM_FROM), made once; its records: `npm run cli -- platform-sender`. A
    // failure here (DNS unreachable while its return path is chosen) does not stop the start: the first account mail
    // makes it then.
    try {
      const sender = await ensurePlatformSender(db, config, {
        hosts: config,
        secrets: secretsKey(config),
        resolver: createResolver({ servers: config.DNS_SERVERS }),
        reservedAllowed: config.RESERVED_TLDS_ALLOWED,
      });
      if (sender)
        log.info(
          { team_id: sender.team.id, domain: sender.domain.name, status: sender.domain.status },
          'platform_sender.ready',
        );
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'platform_sender.failed');
    }
    return first;
  } finally {
    await db.destroy();
  }
}
