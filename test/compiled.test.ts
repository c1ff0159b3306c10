// The build as production runs it: plain node on dist/*.js (`npm run build`, tsconfig.build.json), no tsx. `npm start`
// on a fresh database and Redis prefix runs the compiled launcher, setup and four processes, and an email sent
// through the API leaves the compiled mta signed by a DKIM signing thread (the compiled sign-worker.js) for a loopback
// MX. The build's migrations carry their sources' names, so a database migrated by either layout is up to date for
// the other. The rest of the suite runs the sources through tsx (ava.config.js).
import test, { type ExecutionContext } from 'ava';
import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { promises as dnsPromises } from 'node:dns';
import { tmpdir } from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { migrateLatest } from '../shared/db/migrate.ts';
import { root as ROOT } from '../shared/layout.ts';
import { adminUrl, createTestDatabase } from './helpers/db.ts';
import { startDnsServer, type DnsServer } from './helpers/dns-server.ts';
import { freePort } from './helpers/ports.ts';
import { startSmtpSink } from './helpers/smtp-sink.ts';
import { until } from './helpers/wait.ts';

const SOURCES = readdirSync(path.join(ROOT, 'migrations'))
  .filter((f) => f.endsWith('.ts'))
  .sort();

// The environment of the commands below: this one without NODE_OPTIONS, so nothing can preload tsx into them.
const { NODE_OPTIONS: _preload, ...baseEnv } = process.env;

function dbUrl(name: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr });
    });
  });
}

/** `node dist/<file>`, as the systemd units run the build. */
const runBuilt = (file: string, args: string[], env: Record<string, string>) =>
  run(process.execPath, [path.join('dist', file), ...args], { ...baseEnv, ...env });

test.before(async (t) => {
  t.timeout(300_000);
  // Incremental (tsc -b), and the dashboard only when web/ changed since its last build (web/build-inputs.js): a build
  // already up to date costs a second. Production's, as `npm start` below and the dashboard tests' helper build it
  // (ava's NODE_ENV=test would make React's development build, and the next of them would build it again).
  const build = await run('npm', ['run', 'build'], { ...baseEnv, NODE_ENV: 'production' });
  if (build.code !== 0) throw new Error(`npm run build failed:\n${build.out}`);
});

/** A database that does not exist yet, dropped after the test. */
function freshDatabase(t: { teardown(fn: () => Promise<void>): void }): string {
  const name = `pw_built_${randomBytes(5).toString('hex')}`;
  t.teardown(async () => {
    const admin = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
    await admin.raw(`drop database if exists "${name}" with (force)`);
    await admin.destroy();
  });
  return name;
}

test('the build migrates under the sources’ names, so either layout finds the other’s database up to date', async (t) => {
  t.timeout(120_000);
  // Compiled first, on a database that does not exist yet: it records the .ts names.
  const name = freshDatabase(t);
  const migrate = await runBuilt('shared/db/migrate-cli.js', [], { DATABASE_URL: dbUrl(name) });
  t.is(migrate.code, 0, migrate.out);
  t.deepEqual(JSON.parse(migrate.out).applied, SOURCES);
  const db = knexFactory({ client: 'pg', connection: dbUrl(name), pool: { min: 0, max: 1 } });
  try {
    t.deepEqual(
      (await db('knex_migrations').orderBy('id').select('name')).map((r) => r.name),
      SOURCES,
    );
    // The sources (this process runs them through tsx) find nothing to apply, and no migration missing.
    t.deepEqual(await migrateLatest(db), []);
  } finally {
    await db.destroy();
  }

  // The sources first (the test databases are copies of a template they migrated): the build applies nothing.
  const sourced = await createTestDatabase();
  try {
    const again = await runBuilt('shared/db/migrate-cli.js', [], { DATABASE_URL: sourced.url });
    t.is(again.code, 0, again.out);
    t.deepEqual(JSON.parse(again.out).applied, []);
  } finally {
    await sourced.drop();
  }
});

test('the setup as postwerk-setup.service runs it: the first key goes to the --key-file (0600), not to the journal', async (t) => {
  t.timeout(120_000);
  const name = freshDatabase(t);
  const state = await mkdtemp(path.join(tmpdir(), 'pw-setup-'));
  t.teardown(() => rm(state, { recursive: true, force: true }));
  const keyFile = path.join(state, 'first-team-key.txt');
  const env = { DATABASE_URL: dbUrl(name), SECRETS_KEY_FILE: path.join(state, 'secrets.key'), LOG_LEVEL: 'info' };

  const first = await runBuilt('shared/launcher/setup-cli.js', ['--key-file', keyFile], env);
  t.is(first.code, 0, first.out);
  t.notRegex(first.out, /rk_[0-9A-Za-z]{20,}/, 'the key is not in the output (the journal)');
  t.regex(first.out, /"msg":"first_team\.created"/);
  t.true(first.out.includes(JSON.stringify(keyFile)), 'the output says where the key is');
  t.is(statSync(keyFile).mode & 0o777, 0o600);
  const key = /\n {2}(rk_[0-9A-Za-z]+)\n/.exec(readFileSync(keyFile, 'utf8'))?.[1];
  t.truthy(key);
  t.is(statSync(env.SECRETS_KEY_FILE).mode & 0o777, 0o600);

  // Every later start: nothing to make, the key file left as the operator left it (here: deleted).
  rmSync(keyFile);
  const again = await runBuilt('shared/launcher/setup-cli.js', ['--key-file', keyFile], env);
  t.is(again.code, 0, again.out);
  t.false(existsSync(keyFile));
  t.regex(again.out, /"applied":\[\]/);
  const db = knexFactory({ client: 'pg', connection: env.DATABASE_URL, pool: { min: 0, max: 1 } });
  try {
    t.is(Number((await db('teams').count({ n: '*' }))[0].n), 1);
    t.truthy(
      await db('api_keys')
        .where({ token_hash: createHash('sha256').update(key!).digest('hex') })
        .first(),
    );
  } finally {
    await db.destroy();
  }
});

/** pid → [parent pid, command line] of every process on the machine (Linux /proc). */
function processTable(): Map<number, { ppid: number; argv: string[]; env: string }> {
  const table = new Map<number, { ppid: number; argv: string[]; env: string }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8');
      table.set(Number(entry), { ppid, argv, env });
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

function descendants(pid: number): { pid: number; argv: string[]; env: string }[] {
  const table = processTable();
  const found: { pid: number; argv: string[]; env: string }[] = [];
  const visit = (parent: number) => {
    for (const [child, p] of table) {
      if (p.ppid !== parent) continue;
      found.push({ pid: child, argv: p.argv, env: p.env });
      visit(child);
    }
  };
  visit(pid);
  return found;
}

/** What runs: npm, the launcher on dist/, its four children on dist/, and nothing that loads tsx or esbuild. */
function checkProcessTree(t: ExecutionContext, npmPid: number): void {
  const tree = descendants(npmPid);
  const launcher = tree.filter((p) => p.argv.includes('dist/shared/launcher/main.js'));
  t.is(launcher.length, 1, JSON.stringify(tree.map((p) => p.argv)));
  const table = processTable();
  const children = tree.filter((p) => table.get(p.pid)?.ppid === launcher[0].pid).map((p) => p.argv);
  t.deepEqual(
    children.sort(),
    ['api', 'inbound', 'mta', 'worker'].map((p) => [process.execPath, path.join(ROOT, 'dist', p, 'main.js')]),
  );
  for (const p of tree) {
    t.false(
      p.argv.some((a) => /tsx|esbuild/.test(a)),
      p.argv.join(' '),
    );
    t.notRegex(p.env, /(^|\0)NODE_OPTIONS=[^\0]*tsx/, p.argv.join(' '));
  }
}

/** The platform key's record as the mta logged it at start, published: the signature verifies. */
async function checkSignature(t: ExecutionContext, out: string, dns: DnsServer, raw: Buffer): Promise<void> {
  const record = JSON.parse(out.split('\n').find((l) => l.includes('"msg":"mta.managed_dkim_record"'))!);
  dns.set(record.name, 'TXT', [record.value]);
  const resolver = new dnsPromises.Resolver();
  resolver.setServers([dns.address]);
  const verified = await dkimVerify(raw, {
    resolver: (n: string, type: string) => resolver.resolve(n, type) as Promise<string[][]>,
  });
  t.deepEqual(
    verified.results.map((r) => [r.status.result, r.signingDomain]),
    [['pass', 'postwerk.localhost']],
  );
}

/**
 * The files that are not TypeScript (the build copies none): the API reference's own script and stylesheet, and the
 * dashboard (dist/web), served by the compiled api from where they are.
 */
async function checkFiles(t: ExecutionContext, port: number): Promise<void> {
  for (const name of ['start.js', 'reference.css']) {
    const res = await fetch(`http://127.0.0.1:${port}/docs/assets/${name}`);
    t.is(res.status, 200, name);
    t.is(await res.text(), readFileSync(path.join(ROOT, 'api', 'reference', name), 'utf8'));
  }
  const page = await fetch(`http://127.0.0.1:${port}/dashboard`);
  t.is(page.status, 200);
  t.regex(await page.text(), /<div id="root">/);
}

test('npm start runs the build with plain node, and a sent email leaves the mta DKIM-signed for its MX', async (t) => {
  t.timeout(300_000);
  const name = freshDatabase(t);
  const state = await mkdtemp(path.join(tmpdir(), 'pw-built-'));
  t.teardown(() => rm(state, { recursive: true, force: true }));
  const dns = await startDnsServer();
  const sink = await startSmtpSink();
  t.teardown(async () => {
    await sink.close();
    await dns.close();
  });
  const port = await freePort();
  const env = {
    ...baseEnv,
    NODE_ENV: 'production',
    DATABASE_URL: dbUrl(name),
    REDIS_PREFIX: `pwtest-${name}`,
    BLOB_DIR: path.join(state, 'blobs'),
    SECRETS_KEY_FILE: path.join(state, 'secrets.key'),
    PORT: String(port),
    SMTP_SUBMISSION_PORT: String(await freePort()),
    SMTP_SUBMISSION_TLS_PORT: String(await freePort()),
    MX_PORT: String(await freePort()),
    DNS_SERVERS: dns.address,
    SMTP_DELIVERY_PORT: String(sink.port),
    // One signing thread: every signature comes from the compiled worker thread, none from the main thread.
    MTA_SIGNING_THREADS: '1',
    LOG_LEVEL: 'info',
    RESERVED_TLDS_ALLOWED: 'test',
    ENV_FILE: 'none',
    METRICS_API_PORT: '0',
    METRICS_MTA_PORT: '0',
    METRICS_INBOUND_PORT: '0',
    METRICS_WORKER_PORT: '0',
    TRACKING_PORT: '0',
  };

  const npm = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  npm.stdout.on('data', (d) => (out += d));
  npm.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (npm.exitCode === null) for (const p of [npm.pid!, ...descendants(npm.pid!).map((d) => d.pid)]) kill(p);
  });

  const key = await until(() => /\n {2}(rk_[0-9A-Za-z]+)\n/.exec(out)?.[1], {
    what: 'the first key',
    timeoutMs: 120_000,
    intervalMs: 100,
  });
  const startedMsg = { api: 'api.listening', mta: 'mta.started', inbound: 'mx.listening', worker: 'worker.started' };
  for (const [proc, msg] of Object.entries(startedMsg)) {
    const started = new RegExp(`"process":"${proc}"[^\\n]*"msg":"${msg.replace('.', '\\.')}"`);
    await until(() => started.test(out), { what: `${proc} to start`, timeoutMs: 120_000, intervalMs: 100 });
  }

  checkProcessTree(t, npm.pid!);

  const api = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${port}${route}`, {
      method,
      headers: { 'user-agent': 'compiled-test', authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  const team = await api('GET', '/team');
  t.is(team.status, 200, JSON.stringify(team.body));
  const ready = await api('GET', '/ready');
  t.is(ready.status, 200, JSON.stringify(ready.body));
  await checkFiles(t, port);

  // The managed domain reaches the team's verified identities: one made by the compiled operator CLI.
  const identity = await runBuilt(
    'shared/cli/main.js',
    ['team', 'verify-identity', '--team', team.body.id, '--email', 'owner@built-inbox.test'],
    { DATABASE_URL: env.DATABASE_URL, SECRETS_KEY_FILE: env.SECRETS_KEY_FILE },
  );
  t.is(identity.code, 0, identity.out);
  const db = knexFactory({ client: 'pg', connection: env.DATABASE_URL, pool: { min: 0, max: 1 } });
  const managed = await db('domains').where({ team_id: team.body.id, managed: true }).first();
  await db.destroy();
  dns.set('built-inbox.test', 'MX', [{ exchange: 'mx.built-inbox.test', priority: 10 }]);
  dns.set('mx.built-inbox.test', 'A', ['127.0.0.1']);
  const sent = await api('POST', '/emails', {
    from: `Owner <owner@${managed.name}>`,
    to: 'owner@built-inbox.test',
    subject: 'From the build',
    text: 'compiled, not transpiled',
  });
  t.is(sent.status, 200, JSON.stringify(sent.body));
  await sink.waitFor(() => sink.deliveredTo('owner@built-inbox.test').length > 0, 60_000);
  const [message] = sink.deliveredTo('owner@built-inbox.test');
  t.true(message.raw.toString().includes('Subject: From the build'));

  await checkSignature(t, out, dns, message.raw);

  // SIGTERM to npm reaches the launcher, which stops every process cleanly.
  npm.kill('SIGTERM');
  t.is(await exited, 0, out.slice(-3000));
  for (const proc of ['api', 'mta', 'inbound', 'worker'])
    t.regex(out, new RegExp(`"process":"${proc}"[^\\n]*"msg":"process.stopped"`), `${proc} stopped cleanly`);
});

function kill(pid: number) {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
