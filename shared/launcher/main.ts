// `npm start`: the whole platform on one machine. Creates and migrates the database, creates the first team
// on an empty database, runs api, mta, inbound and worker as child processes (restarting one that dies, stopping
// them all on SIGTERM/SIGINT) and, on the first run, prints the team's key and what to try once the api answers.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { createDb } from '../db/knex.ts';
import { ensureDatabase, migrateLatest } from '../db/migrate.ts';
import { createLogger } from '../logger.ts';
import { firstRun } from './first-run.ts';
import { ensureSecretsKeyFile } from '../secrets.ts';
import { checkRedis, readConfig, starting, StartupError } from '../startup.ts';
import { welcome } from './welcome.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const processes = { api: 'api/main.ts', mta: 'mta/main.ts', inbound: 'inbound/main.ts', worker: 'worker/main.ts' };

// The env file (.env beside package.json, or ENV_FILE) is read into this environment: the children inherit it.
const config = readConfig('launcher');
const log = createLogger(config, 'launcher');

if (ensureSecretsKeyFile(config)) log.info({ file: config.SECRETS_KEY_FILE }, 'secrets_key.created');
const first = await starting(log, async () => {
  await checkRedis(config.REDIS_URL);
  await ensureDatabase(config.DATABASE_URL).catch((err: Error) => {
    throw new StartupError(`cannot reach PostgreSQL at DATABASE_URL: ${err.message}`);
  });
  const db = createDb(config, { min: 0, max: 2 });
  try {
    const applied = await migrateLatest(db);
    log.info({ applied }, 'migrations.applied');
    return await firstRun(db, config.FIRST_TEAM_NAME, config.MANAGED_DOMAIN_HOST);
  } finally {
    await db.destroy();
  }
});

const children = new Map<string, ChildProcess>();
let stopping = false;

function start(name: string, entry: string, restarts = 0) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, entry)], {
    cwd: root,
    stdio: 'inherit',
    env: process.env,
  });
  children.set(name, child);
  const startedAt = Date.now();
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (stopping) return;
    // A process that ran a while gets a fresh restart budget; one that keeps dying is given up on.
    const budget = Date.now() - startedAt > 60_000 ? 0 : restarts + 1;
    if (budget > 5) {
      log.fatal({ name, code, signal }, 'process.gave_up');
      shutdown(1);
      return;
    }
    const delay = Math.min(30_000, 500 * 2 ** budget);
    log.error({ name, code, signal, restartInMs: delay }, 'process.exited');
    setTimeout(() => !stopping && start(name, entry, budget), delay);
  });
}

function shutdown(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const child of children.values()) child.kill('SIGTERM');
  const force = setTimeout(() => {
    for (const child of children.values()) child.kill('SIGKILL');
    process.exit(code || 1);
  }, 30_000); // as systemd's TimeoutStopSec: long enough for deliveries in flight to record their outcome
  const wait = setInterval(() => {
    if (children.size === 0) {
      clearInterval(wait);
      clearTimeout(force);
      process.exit(code);
    }
  }, 100);
}

process.on('SIGTERM', () => shutdown(0));
process.on('SIGINT', () => shutdown(0));
for (const [name, entry] of Object.entries(processes)) start(name, entry);
log.info({ processes: Object.keys(processes) }, 'platform.started');
if (first) {
  await apiAnswers(60_000);
  process.stdout.write(welcome(first, config));
}

/** Waits until the api answers /health (or the time is up: the message is still worth printing). */
async function apiAnswers(ms: number): Promise<void> {
  const host = ['0.0.0.0', '::', ''].includes(config.HOST) ? '127.0.0.1' : config.HOST;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${config.PORT}/health`;
  for (const deadline = Date.now() + ms; Date.now() < deadline && !stopping;) {
    const ok = await fetch(url, { headers: { 'user-agent': 'postwerk-launcher' }, signal: AbortSignal.timeout(1000) })
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}
