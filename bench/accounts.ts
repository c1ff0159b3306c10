// The accounts suite of `npm run bench` (BENCH_ONLY=accounts; see bench/README.md): the real api process (its own
// database and Redis prefix) answering sign-ins one at a time (the cost of one sign-in: Argon2id dominates), then
// the other session routes paced at 100 requests a second each, open loop (latency counted from when a request
// was due), with the session cookie and, for the write, the CSRF header and Origin.
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import argon2 from 'argon2';
import { createDb } from '../shared/db/knex.ts';
import { signUp, verifyEmail } from '../shared/accounts/signup.ts';
import { ARGON2_OPTIONS } from '../shared/accounts/passwords.ts';
import { createTeamForUser } from '../shared/teams/members.ts';
import { createTestDatabase } from '../test/helpers/db.ts';
import { startServer, type ChildServer } from './servers.ts';
import { startWindow } from './proc.ts';
import { USER_AGENT } from './load.ts';
import { fixed, renderTable } from './table.ts';

export interface AccountsBenchOptions {
  logins: number;
  rate: number;
  seconds: number;
  redisUrl: string;
  onCleanup(step: () => Promise<unknown>): void;
}

/** The budget for every session route but sign-in, at the 99th percentile at 100 requests a second. */
export const SESSION_P99_BUDGET_MS = 10;
const PASSWORD = 'a bench password of some length';
/** Addresses with an account, for comparing the answers' time for known and unknown addresses. */
const KNOWN = 30;

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

interface Call {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
}

function request(
  agent: http.Agent,
  base: string,
  c: Call,
): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  const url = new URL(base + c.path);
  const payload = c.body === undefined ? undefined : JSON.stringify(c.body);
  return new Promise((resolve) => {
    const req = http.request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: c.method,
        headers: {
          'user-agent': USER_AGENT,
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
          ...c.headers,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      },
    );
    req.on('error', () => resolve({ status: 0, headers: {} }));
    req.end(payload);
  });
}

/** `n` requests at `rate` a second, open loop; the latencies (from when each was due) of the right answers. */
async function paced(api: ChildServer, c: Call, n: number, rate: number, expect: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });
  const ms: number[] = [];
  let failed = 0;
  const started = performance.now();
  const all: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    all.push(
      request(agent, api.url, c).then((r) => {
        if (r.status === expect) ms.push(performance.now() - due);
        else failed++;
      }),
    );
  }
  await Promise.all(all);
  agent.destroy();
  return { ms: ms.sort((a, b) => a - b), failed };
}

async function setup(o: AccountsBenchOptions) {
  const database = await createTestDatabase();
  o.onCleanup(() => database.drop());
  const blobDir = await mkdtemp(path.join(tmpdir(), 'pw-bench-accounts-'));
  o.onCleanup(() => rm(blobDir, { recursive: true, force: true }));
  const db = createDb({ DATABASE_URL: database.url }, { min: 0, max: 2 });
  try {
    const email = `bench-${randomBytes(3).toString('hex')}@people.test`;
    const { token } = await signUp(db, { email, password: PASSWORD });
    const user = await verifyEmail(db, token);
    const { team } = await createTeamForUser(db, user.id, { name: 'Bench' }, 'postwerk.localhost');
    await db('users').where({ id: user.id }).update({ last_team_id: team.id });
    // Accounts whose addresses the timing comparison uses, one request each (the mail throttle is per address).
    const known: string[] = [];
    for (let i = 0; i < KNOWN; i++) {
      const address = `known-${i}-${randomBytes(3).toString('hex')}@people.test`;
      await verifyEmail(db, (await signUp(db, { email: address, password: PASSWORD })).token);
      known.push(address);
    }
    return { databaseUrl: database.url, blobDir, email, teamId: team.id, known };
  } finally {
    await db.destroy();
  }
}

export async function runAccountsBench(o: AccountsBenchOptions): Promise<boolean> {
  const s = await setup(o);
  const redisPrefix = `pwbench-acc-${randomBytes(4).toString('hex')}`;
  const api = await startServer('api', 'api/main.ts', {
    NODE_ENV: 'production',
    LOG_LEVEL: 'silent',
    HOST: '127.0.0.1',
    DATABASE_URL: s.databaseUrl,
    REDIS_URL: o.redisUrl,
    REDIS_PREFIX: redisPrefix,
    BLOB_DIR: s.blobDir,
    SECRETS_KEY: randomBytes(32).toString('base64'),
    RATE_LIMIT_RPS: '100000',
    // The bench signs in hundreds of times from one address: the throttles would (rightly) stop it.
    AUTH_ACCOUNT_FAILURES: '1000000',
    AUTH_CLIENT_ATTEMPTS: '1000000',
  });
  o.onCleanup(() => api.stop());
  const cookie = await measureLogins(api, s.email, o.logins);
  await compareKnownUnknown(api, s.known);
  const ok = await measureRoutes(api, cookie, s.teamId, o);
  await api.stop();
  return ok;
}

/** Sign-ins one at a time (and Argon2id alone for comparison); answers the last session's cookies. */
async function measureLogins(api: ChildServer, email: string, logins: number): Promise<string> {
  const agent = new http.Agent({ keepAlive: true });
  const login: Call = { method: 'POST', path: '/auth/login', body: { email, password: PASSWORD } };

  // Argon2id alone, in this process: the floor of a sign-in.
  const hash = await argon2.hash(PASSWORD, ARGON2_OPTIONS);
  const alone: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    await argon2.verify(hash, PASSWORD);
    alone.push(performance.now() - t0);
  }
  // Sign-ins one at a time through the api: wall time each, and the api's CPU per sign-in.
  const walls: number[] = [];
  let cookie = '';
  const window = startWindow(api.pid);
  const t0 = performance.now();
  for (let i = 0; i < logins; i++) {
    const started = performance.now();
    const r = await request(agent, api.url, login);
    walls.push(performance.now() - started);
    if (r.status !== 200) throw new Error(`sign-in answered ${r.status}`);
    cookie = (r.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).join('; ');
  }
  const cpu = window.end();
  const cpuMsPerLogin =
    cpu.cpuPercent === undefined ? undefined : ((cpu.cpuPercent / 100) * (performance.now() - t0)) / logins;
  walls.sort((a, b) => a - b);
  alone.sort((a, b) => a - b);
  console.log(
    renderTable(
      ['sign-in', 'n', 'p50 ms', 'p99 ms', 'api CPU ms each', 'machine CPU %'],
      [
        [
          'argon2id verify alone (bench process)',
          alone.length,
          fixed(pct(alone, 50), 1),
          fixed(pct(alone, 99), 1),
          '',
          '',
        ],
        [
          'POST /auth/login (api, one at a time)',
          walls.length,
          fixed(pct(walls, 50), 1),
          fixed(pct(walls, 99), 1),
          fixed(cpuMsPerLogin, 1),
          fixed(cpu.machineCpuPercent, 0),
        ],
      ],
    ),
  );

  agent.destroy();
  return cookie;
}

/**
 * The routes whose answer must not tell whether an address has an account: each asked for a known and an unknown
 * address in turn (one request each), their wall times side by side. Bodies are compared too.
 */
async function compareKnownUnknown(api: ChildServer, known: string[]) {
  const agent = new http.Agent({ keepAlive: true });
  const rows = [];
  const cases: [string, (email: string) => Call][] = [
    ['POST /auth/signup', (email) => ({ method: 'POST', path: '/auth/signup', body: { email, password: PASSWORD } })],
    ['POST /auth/password-reset', (email) => ({ method: 'POST', path: '/auth/password-reset', body: { email } })],
    [
      'POST /auth/login (wrong password)',
      (email) => ({ method: 'POST', path: '/auth/login', body: { email, password: 'not the password' } }),
    ],
  ];
  for (const [name, call] of cases) {
    const times: Record<'known' | 'unknown', number[]> = { known: [], unknown: [] };
    const statuses = new Set<string>();
    for (const [i, address] of known.entries()) {
      for (const [kind, email] of [
        ['known', address],
        ['unknown', `nobody-${i}-${randomBytes(3).toString('hex')}@people.test`],
      ] as const) {
        const t0 = performance.now();
        const r = await request(agent, api.url, call(email));
        times[kind].push(performance.now() - t0);
        statuses.add(`${kind} ${r.status}`);
      }
    }
    for (const kind of ['known', 'unknown'] as const) {
      const sorted = times[kind].sort((a, b) => a - b);
      rows.push([
        `${name}, ${kind} address`,
        sorted.length,
        fixed(pct(sorted, 50), 1),
        fixed(pct(sorted, 90), 1),
        [...statuses].filter((x) => x.startsWith(kind)).join(' '),
      ]);
    }
  }
  agent.destroy();
  console.log('');
  console.log(renderTable(['same answer, similar time', 'n', 'p50 ms', 'p90 ms', 'statuses'], rows));
}

/** Each session route paced at `o.rate` a second for `o.seconds`: PASS when its p99 is under the budget. */
async function measureRoutes(api: ChildServer, cookie: string, teamId: string, o: AccountsBenchOptions) {
  const s = { teamId };
  const csrf = /postwerk_csrf=([^;]+)/.exec(cookie)![1];
  const write = { cookie, 'x-csrf-token': csrf, origin: api.url };
  const routes: [Call, number][] = [
    [{ method: 'GET', path: '/auth/session', headers: { cookie } }, 200],
    [{ method: 'GET', path: '/me', headers: { cookie } }, 200],
    [{ method: 'GET', path: '/auth/mfa', headers: { cookie } }, 200],
    [{ method: 'GET', path: '/auth/sessions', headers: { cookie } }, 200],
    [{ method: 'GET', path: '/teams', headers: { cookie } }, 200],
    [{ method: 'GET', path: `/teams/${s.teamId}/members`, headers: { cookie } }, 200],
    [{ method: 'PATCH', path: `/teams/${s.teamId}`, headers: write, body: { name: 'Bench renamed' } }, 200],
    [{ method: 'GET', path: '/domains', headers: { cookie } }, 200],
  ];
  const n = o.rate * o.seconds;
  const rows = [];
  let ok = true;
  for (const [call, expect] of routes) {
    await paced(api, call, Math.min(n, 100), o.rate, expect); // warm-up
    const r = await paced(api, call, n, o.rate, expect);
    const p99 = pct(r.ms, 99);
    const pass = r.failed === 0 && p99 < SESSION_P99_BUDGET_MS;
    ok &&= pass;
    rows.push([
      `${call.method} ${call.path.replace(s.teamId, '{id}')}`,
      n,
      r.failed,
      fixed(pct(r.ms, 50), 1),
      fixed(p99, 1),
      pass ? 'PASS' : 'FAIL',
    ]);
  }
  console.log('');
  console.log(
    renderTable(
      [`session routes at ${o.rate}/s`, 'requests', 'failed', 'p50 ms', 'p99 ms', `p99 < ${SESSION_P99_BUDGET_MS} ms`],
      rows,
    ),
  );
  return ok;
}
