// The launcher as a user runs it: a database that does not exist yet, then the whole platform. From the sources
// through tsx, as `npm run dev` runs it, also when the suite itself runs compiled (`npm test`): this file keeps the
// sources' layout tested, its processes and the mta's signing thread included; test/compiled.test.ts runs `npm
// start`, the same launcher from the build.
import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { adminUrl } from './helpers/db.ts';
import { freePort } from './helpers/ports.ts';
import { until } from './helpers/wait.ts';
import { root } from '../shared/layout.ts';

function dbUrl(name: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** The first run's message comes once the api answers: the managed domain, the simulator, a send that works. */
async function checkWelcome(t: ExecutionContext, printed: string, port: number, key: string): Promise<void> {
  const health = await fetch(`http://127.0.0.1:${port}/health`, { headers: { 'user-agent': 'launcher-test' } });
  t.is(health.status, 200, 'the api answers by the time the key is printed');
  t.regex(printed, /from hello@[a-z0-9-]+\.postwerk\.localhost, your team's managed domain/);
  t.regex(printed, /delivered@simulator\.postwerk\.localhost/);
  t.regex(printed, new RegExp(`POST http://127\\.0\\.0\\.1:${port}/domains`));
  // The printed curl works as printed.
  const body = /-d '(\{.*\})'/.exec(printed)?.[1];
  t.truthy(body, 'a curl send is printed');
  const sent = await fetch(`http://127.0.0.1:${port}/emails`, {
    method: 'POST',
    headers: { 'user-agent': 'curl', authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body,
  });
  t.is(sent.status, 200, await sent.clone().text());
}

test('the launcher creates and migrates the database, prints the first key once, runs every process, stops cleanly', async (t) => {
  t.timeout(300_000);
  const name = `pw_launch_${randomBytes(5).toString('hex')}`;
  const blobDir = await mkdtemp(path.join(tmpdir(), 'pw-launch-'));
  const port = await freePort();
  const env = {
    ...process.env,
    DATABASE_URL: dbUrl(name),
    REDIS_PREFIX: `pwtest-${name}`,
    BLOB_DIR: blobDir,
    PORT: String(port),
    SMTP_SUBMISSION_PORT: String(await freePort()),
    SMTP_SUBMISSION_TLS_PORT: String(await freePort()),
    MX_PORT: String(await freePort()),
    METRICS_API_PORT: '0',
    METRICS_MTA_PORT: '0',
    METRICS_INBOUND_PORT: '0',
    METRICS_WORKER_PORT: '0',
    TRACKING_PORT: '0',
    LOG_LEVEL: 'info',
    NODE_ENV: 'test',
    RESERVED_TLDS_ALLOWED: 'test',
  };
  const admin = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  t.teardown(async () => {
    await admin.raw(`drop database if exists "${name}" with (force)`);
    await admin.destroy();
    await rm(blobDir, { recursive: true, force: true });
  });

  const run = () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'shared/launcher/main.ts')], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    return { child, output: () => out, exited };
  };

  const first = run();
  // The first run's message comes once the api answers: the key, the managed domain, the simulator, a send.
  const key = await until(() => /\n {2}(rk_[0-9A-Za-z]+)\n/.exec(first.output())?.[1], {
    what: 'the first key',
    timeoutMs: 120_000,
    intervalMs: 100,
  });
  await checkWelcome(t, first.output(), port, key);
  const ready = await until(
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/ready`, { headers: { 'user-agent': 'launcher-test' } });
      return res.status === 200 ? res.json() : undefined;
    },
    { what: '/ready', timeoutMs: 30_000, intervalMs: 100, ignoreErrors: true },
  );
  t.is(ready.status, 'ok');
  const team = await fetch(`http://127.0.0.1:${port}/team`, {
    headers: { 'user-agent': 't', authorization: `Bearer ${key}` },
  });
  t.is(team.status, 200);
  // Each process says when it has finished starting: a SIGTERM that reaches one still loading its modules (before
  // it traps signals, shared/shutdown.ts) would not be a clean stop to test. Starting takes seconds alone and far
  // longer while the rest of the suite runs on the same two cores.
  const startedMsg = { api: 'api.listening', mta: 'mta.started', inbound: 'mx.listening', worker: 'worker.started' };
  for (const [proc, msg] of Object.entries(startedMsg)) {
    const started = new RegExp(`"process":"${proc}"[^\\n]*"msg":"${msg.replace('.', '\\.')}"`);
    await until(() => started.test(first.output()), { what: `${proc} to start`, timeoutMs: 120_000, intervalMs: 100 });
  }
  first.child.kill('SIGTERM');
  const exitCode = await first.exited;
  for (const proc of ['api', 'mta', 'inbound', 'worker']) {
    const stopped = new RegExp(`"process":"${proc}"[^\\n]*"msg":"process.stopped"`).test(first.output());
    // What tells why, in the assertion's message (the part of a failure CI keeps): the process's last lines, the
    // launcher's (a process that died and waited for its restart) and whatever was not a log line (a stack trace).
    const why = stopped
      ? ''
      : first
          .output()
          .split('\n')
          .filter((l) => l.includes(`"process":"${proc}"`) || l.includes('"process":"launcher"') || !l.startsWith('{'))
          .slice(-30)
          .join('\n');
    t.true(stopped, `${proc} stopped cleanly${why && `; its last lines:\n${why}`}`);
  }
  t.is(exitCode, 0, 'the launcher stops cleanly once every process has');

  // A second start finds the team and prints no key.
  const second = run();
  await until(() => second.output().includes('platform.started'), {
    what: 'second start',
    timeoutMs: 30_000,
    intervalMs: 100,
  });
  second.child.kill('SIGTERM');
  const launcherLines = () =>
    second
      .output()
      .split('\n')
      .filter((l) => l.includes('"process":"launcher"'))
      .join('\n');
  t.is(await second.exited, 0, launcherLines());
  t.notRegex(second.output(), /rk_[0-9A-Za-z]{20,}/);
  const db = knexFactory({ client: 'pg', connection: dbUrl(name), pool: { min: 0, max: 1 } });
  t.is(Number((await db('teams').count({ n: '*' }))[0].n), 1);
  await db.destroy();
});
