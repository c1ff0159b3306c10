// The README's quick start as a newcomer runs it: a clean clone in a temporary directory, a `.env` beside
// package.json, `npm install && npm start`; the first run prints a key once the api answers, the dashboard's page
// answers at /, and the send it suggests reaches the simulator and is delivered. (The clone is of the committed HEAD:
// what a newcomer gets.) The clone starts with a copy of this checkout's node_modules, so its `npm install` checks
// the tree against package-lock.json and finds it complete: installing the 860 packages from npm's cache cost
// about 55 s of CPU (a twentieth of a CI run's), and a clean clone's install from nothing is what `.ci/run` does
// before the suite. What the test proves is the rest: `npm start` builds, migrates, starts and sends from a clone.
import test from 'ava';
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import knexFactory from 'knex';
import { adminUrl } from './helpers/db.ts';
import { freePort } from './helpers/ports.ts';
import { until } from './helpers/wait.ts';
import { root } from '../shared/layout.ts';

const run = promisify(execFile);

test('a clean clone with a .env: npm install && npm start, the dashboard at /, then the printed send is delivered', async (t) => {
  t.timeout(600_000);
  const dir = await mkdtemp(path.join(tmpdir(), 'pw-quick-'));
  const name = `pw_quick_${randomBytes(5).toString('hex')}`;
  const database = new URL(adminUrl);
  database.pathname = `/${name}`;
  const admin = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  t.teardown(async () => {
    await admin.raw(`drop database if exists "${name}" with (force)`);
    await admin.destroy();
    await rm(dir, { recursive: true, force: true });
  });
  const clone = path.join(dir, 'postwerk');
  await run('git', ['clone', '--quiet', root, clone]);
  // A copy, not hard links: nothing the clone's npm does can then change this checkout's files.
  await run('cp', ['-a', path.join(root, 'node_modules'), path.join(clone, 'node_modules')]);
  const port = await freePort();
  // Everything a newcomer on a shared machine would set: their own database, Redis prefix and ports.
  await writeFile(
    path.join(clone, '.env'),
    [
      `DATABASE_URL=${database}`,
      `REDIS_PREFIX=pwtest-${name}`,
      `PORT=${port}`,
      `SMTP_SUBMISSION_PORT=${await freePort()}`,
      `SMTP_SUBMISSION_TLS_PORT=${await freePort()}`,
      `MX_PORT=${await freePort()}`,
      'METRICS_API_PORT=0',
      'METRICS_MTA_PORT=0',
      'METRICS_INBOUND_PORT=0',
      'METRICS_WORKER_PORT=0',
      'TRACKING_PORT=0',
      'FIRST_TEAM_NAME=Quick start',
      '',
    ].join('\n'),
  );
  // Only what a fresh shell has: no variable of this test run reaches the clone except through its .env.
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? tmpdir(),
    npm_config_cache: process.env.npm_config_cache ?? '',
  };
  if (!env.npm_config_cache) delete (env as Record<string, string>).npm_config_cache;
  const child = spawn('sh', ['-c', 'npm install --no-audit --no-fund --loglevel=error && exec npm start'], {
    cwd: clone,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.teardown(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  });

  const key = await until(() => /\n {2}(rk_[0-9A-Za-z]+)\n/.exec(out)?.[1], {
    what: `the first key (output so far:\n${out.slice(-1500)})`,
    timeoutMs: 420_000,
    intervalMs: 200,
  });
  t.regex(out, /First run: created team "Quick start"/, 'the .env was read');
  const body = /-d '(\{.*\})'/.exec(out)?.[1];
  t.truthy(body, 'a send is printed');
  const base = `http://127.0.0.1:${port}`;
  // The dashboard, built by `npm start`, is what a newcomer's browser gets at /.
  const page = await fetch(`${base}/`, { headers: { 'user-agent': 'quick-start', accept: 'text/html' } });
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type') ?? '', /^text\/html/);
  const csp = page.headers.get('content-security-policy') ?? '';
  t.regex(csp, /default-src 'none'/, 'the dashboard page has its policy');
  t.regex(csp, /script-src 'self'(;|$)/);
  t.regex(csp, /frame-ancestors 'none'/);
  t.regex(await page.text(), /<div id="root"><\/div>/, "the dashboard's page");
  const headers = { 'user-agent': 'quick-start', authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const sent = await fetch(`${base}/emails`, { method: 'POST', headers, body });
  t.is(sent.status, 200, await sent.clone().text());
  const { id } = (await sent.json()) as { id: string };
  const email = await until(
    async () => {
      const res = await fetch(`${base}/emails/${id}`, { headers });
      const got = (await res.json()) as { last_event: string };
      return got.last_event === 'delivered' ? got : undefined;
    },
    { what: 'the email delivered', timeoutMs: 60_000, intervalMs: 250 },
  );
  t.is(email.last_event, 'delivered');

  process.kill(-child.pid!, 'SIGTERM');
  await exited;
});
