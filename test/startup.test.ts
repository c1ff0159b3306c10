// A process that cannot work says why and exits non-zero before it claims to listen: PostgreSQL or Redis out of
// reach, a database not there or not migrated, a port in use (named by its variable). And every entry point reads
// the same env file.
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { envOf, startEntry } from './helpers/processes.ts';
import { codePath, loaderArgs } from '../shared/layout.ts';

let p: Platform;

test.before(async () => {
  p = await startPlatform();
});

test.after.always(async () => {
  await p?.close();
});

/** Starts `file` with the platform's environment and `extra`; answers its exit code and everything it printed. */
async function failedStart(file: string, extra: Record<string, string>) {
  const entry = startEntry(file, p.config, {
    MX_PORT: '0',
    SMTP_SUBMISSION_PORT: '0',
    SMTP_SUBMISSION_TLS_PORT: '0',
    PORT: '0',
    ...extra,
  });
  const code = await new Promise<number | null>((resolve) => {
    const timer = setInterval(async () => {
      const output = entry.output();
      // A failed start ends the process by itself, a moment after its line (a SIGTERM then would take the exit
      // code's place); one that got as far as listening (its metrics listener comes first) is stopped.
      if (/startup\.failed|invalid configuration/.test(output)) {
        clearInterval(timer);
        resolve(await entry.exit(10_000));
      } else if (/"msg":"(api|mx|submission)\.listening"|\.started/.test(output)) {
        clearInterval(timer);
        resolve(await entry.stop(5000));
      }
    }, 50);
  });
  return { code, output: entry.output() };
}

test('a database that does not exist: the api says so, names DATABASE_URL and exits 1 without listening', async (t) => {
  const url = new URL(p.config.DATABASE_URL);
  url.pathname = '/pw_never_created';
  const { code, output } = await failedStart('api/main.ts', { DATABASE_URL: url.toString() });
  t.is(code, 1);
  t.regex(output, /api: the database of DATABASE_URL \(.*pw_never_created\) does not exist: run `npm run migrate`/);
  t.notRegex(output, /api\.listening/);
  t.notRegex(output, /\n\s+at /, 'no stack trace');
});

test('PostgreSQL out of reach (worker) and Redis out of reach (inbound): each named with its variable', async (t) => {
  const pgDown = await failedStart('worker/main.ts', { DATABASE_URL: 'postgres://postgres@127.0.0.1:9/x' });
  t.is(pgDown.code, 1);
  t.regex(pgDown.output, /worker: cannot reach PostgreSQL at DATABASE_URL \(postgres:\/\/postgres@127\.0\.0\.1:9\/x\)/);
  const redisDown = await failedStart('inbound/main.ts', { REDIS_URL: 'redis://127.0.0.1:9' });
  t.is(redisDown.code, 1);
  t.regex(redisDown.output, /inbound: cannot reach Redis at REDIS_URL \(redis:\/\/127\.0\.0\.1:9\)/);
});

test('a port in use is named by the variable that chose it (api PORT, inbound MX_PORT, mta SMTP_SUBMISSION_PORT, worker METRICS_WORKER_PORT)', async (t) => {
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => taken.close());
  const port = String((taken.address() as net.AddressInfo).port);
  const cases: [string, string][] = [
    ['api/main.ts', 'PORT'],
    ['inbound/main.ts', 'MX_PORT'],
    ['mta/main.ts', 'SMTP_SUBMISSION_PORT'],
    ['worker/main.ts', 'METRICS_WORKER_PORT'],
  ];
  for (const [file, variable] of cases) {
    const { code, output } = await failedStart(file, {
      [variable]: port,
      HOST: '127.0.0.1',
      MX_HOST: '127.0.0.1',
      SMTP_HOST: '127.0.0.1',
    });
    t.is(code, 1, `${file}: ${output.slice(-500)}`);
    t.true(output.includes(`port ${port} on 127.0.0.1 (${variable}) is in use`), `${file}: ${output.slice(-500)}`);
  }
});

test('an invalid setting ends the start with its name, not a stack trace', async (t) => {
  const { code, output } = await failedStart('worker/main.ts', { REDIS_PREFIX: 'has space' });
  t.is(code, 1);
  t.regex(output, /worker: invalid configuration:\n\s+REDIS_PREFIX:/);
  t.notRegex(output, /\n\s+at /);
});

test('npm run config reads the env file as every entry point does; the environment wins over it', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'pw-env-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'env');
  await writeFile(file, 'RATE_LIMIT_RPS=7\nFIRST_TEAM_NAME="From the file"\nLOG_LEVEL=warn\n');
  const env = { ...envOf(p.config), ENV_FILE: file, LOG_LEVEL: 'error' };
  delete (env as Record<string, string>).RATE_LIMIT_RPS;
  delete (env as Record<string, string>).FIRST_TEAM_NAME;
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [...loaderArgs, codePath('shared/config-cli.ts')], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let s = '';
    child.stdout.on('data', (d) => (s += d));
    child.on('error', reject);
    child.on('exit', () => resolve(s));
  });
  const printed = JSON.parse(out);
  t.is(printed.env_file, file);
  t.is(printed.config.RATE_LIMIT_RPS, 7);
  t.is(printed.config.FIRST_TEAM_NAME, 'From the file');
  t.is(printed.config.LOG_LEVEL, 'error', 'the environment wins');
  t.regex(printed.config.DATABASE_URL, /^postgres:/);
});
