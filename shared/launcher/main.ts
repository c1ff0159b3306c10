// `npm start`: the whole platform on one machine. Runs the setup (setup.ts: secrets key, database, migrations, the
// first team on an empty database), then runs api, mta, inbound and worker as child processes, restarting one that
// dies, and stops them all on SIGTERM/SIGINT; on the first run, once the api answers, it prints the team's key and
// what to try (welcome.ts). Every child runs the layout this file
// runs in (shared/layout.ts): the build under `npm start`, the TypeScript sources through tsx under `npm run dev`.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readConfig } from '../config.ts';
import { codePath, loaderArgs, root } from '../layout.ts';
import { createLogger } from '../logger.ts';

const processes = { api: 'api/main.ts', mta: 'mta/main.ts', inbound: 'inbound/main.ts', worker: 'worker/main.ts' };

// The env file (.env beside package.json, or ENV_FILE) is read into this environment: the children inherit it.
const config = readConfig('launcher');
const log = createLogger(config, 'launcher');

// glibc gives each thread that allocates an arena of its own (up to 8 a core) and keeps what the thread freed there:
// after V8's and libuv's helper threads have run, a process holds up to ~10 MB more at idle for it. Two arenas kept
// the idle platform 10-30 MB smaller in our measurements, for some contention between threads that allocate at the
// same moment; a MALLOC_ARENA_MAX of the operator's wins (the systemd units set the same default).
const childEnv = { MALLOC_ARENA_MAX: '2', ...process.env };

const children = new Map<string, ChildProcess>();
let stopping = false;
/** A child that did not stop cleanly makes the launcher's own stop fail (exit 1): systemd and a test see it. */
let stopFailed = false;

/** `entry` as a child process, in this layout, with the launcher's environment and output. */
function run(name: string, entry: string, args: string[] = []): ChildProcess {
  const child = spawn(process.execPath, [...loaderArgs, codePath(entry), ...args], {
    cwd: root,
    stdio: 'inherit',
    env: childEnv,
  });
  children.set(name, child);
  child.on('exit', () => children.delete(name));
  return child;
}

function start(name: string, entry: string, restarts = 0) {
  const child = run(name, entry);
  const startedAt = Date.now();
  child.on('exit', (code, signal) => {
    // A process that did not stop cleanly is named: its own last lines above tell why.
    if (stopping) {
      // Killed by the SIGTERM itself: it had not trapped the signals yet (still loading), so it had begun nothing.
      if (signal === 'SIGTERM') log.info({ name }, 'process.stopped_while_loading');
      else if (code !== 0) {
        stopFailed = true;
        log.error({ name, code, signal }, 'process.stop_failed');
      }
      return;
    }
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
      process.exit(stopFailed ? code || 1 : code);
    }
  }, 100);
}

process.on('SIGTERM', () => shutdown(0));
process.on('SIGINT', () => shutdown(0));

// The setup is a process of its own, the one systemd's postwerk-setup.service runs: the launcher stays a small
// supervisor for as long as the platform runs, without the database client, the migrations and the team code that
// only the setup needs (some 13 MB of memory).
// The first team's notice comes back in a file only this user can read, printed once the api answers.
const noticeDir = mkdtempSync(path.join(tmpdir(), 'postwerk-setup-'));
const notice = path.join(noticeDir, 'first-team.txt');
run('setup', 'shared/launcher/setup-cli.ts', ['--key-file', notice]).on('exit', async (code, signal) => {
  if (stopping) return;
  if (code !== 0) {
    log.fatal({ code, signal }, 'setup.failed');
    rmSync(noticeDir, { recursive: true, force: true });
    process.exit(code || 1);
  }
  for (const [name, entry] of Object.entries(processes)) start(name, entry);
  log.info({ processes: Object.keys(processes) }, 'platform.started');
  if (existsSync(notice)) {
    await apiAnswers(60_000);
    process.stdout.write(readFileSync(notice, 'utf8'));
  }
  rmSync(noticeDir, { recursive: true, force: true });
});

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
