// Liveness and readiness, healthy and with each dependency down. A degraded api is the real app (createApp) on
// the healthy platform's deps with one dependency swapped for a broken one.
import test from 'ava';
import http from 'node:http';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createApp } from '../api/app.ts';
import type { ApiDeps } from '../api/deps.ts';
import { createDb } from '../shared/db/knex.ts';
import { createRedis } from '../shared/redis.ts';
import { createFsBlobStore } from '../shared/blobs.ts';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { root } from '../shared/layout.ts';

const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const CHECKS = ['blob_store', 'database', 'redis'];
const SECRET = 's3cret-never-shown';

let p: Platform;
let scratch: string;

test.before(async () => {
  p = await startPlatform();
  scratch = await mkdtemp(path.join(tmpdir(), 'pw-ops-'));
});

test.after.always(async () => {
  await p?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

interface Answer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  ms: number;
}

/** node:http rather than fetch, which always adds `user-agent: node`; here a request may have none. */
function get(base: string, p: string, userAgent: string | null = 'postwerk-tests/1.0'): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get(base + p, { headers: userAgent ? { 'user-agent': userAgent } : {} }, (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (c: string) => (text += c))
          .on('end', () => {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), ms: performance.now() - started });
          });
      })
      .on('error', reject);
  });
}

async function serve(deps: ApiDeps): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createApp(deps).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      return closed;
    },
  };
}

/** A loopback port nothing listens on: bound, then released. */
async function deadPort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function isDegraded(t: import('ava').ExecutionContext, res: Answer, failing: string, error?: RegExp) {
  t.is(res.status, 503, JSON.stringify(res.body));
  t.is(res.body.status, 'degraded');
  t.deepEqual(res.body.failed, [failing]);
  t.deepEqual(res.body.checks.map((c: { name: string }) => c.name).sort(), CHECKS);
  for (const check of res.body.checks) {
    if (check.name === failing) {
      t.false(check.ok);
      t.is(typeof check.error, 'string');
      t.true(check.error.length > 0);
      if (error) t.regex(check.error, error);
      t.true(check.durationMs < 2500, `${failing} took ${check.durationMs} ms`);
    } else {
      t.true(check.ok, `${check.name} still ok: ${JSON.stringify(check)}`);
    }
  }
  t.false(JSON.stringify(res.body).includes(SECRET), 'no credentials in the answer');
  t.true(res.ms < 5000, `answered in ${Math.round(res.ms)} ms`);
}

test('GET /health: ok, the version and the environment, with no key', async (t) => {
  for (const base of ['', '/api/v1']) {
    const res = await get(p.url, `${base}/health`);
    t.is(res.status, 200);
    t.deepEqual(res.body, { status: 'ok', version: pkg.version, env: 'test' });
  }
});

test('GET /ready: every dependency checked and ok', async (t) => {
  const res = await get(p.url, '/ready');
  t.is(res.status, 200);
  t.is(res.body.status, 'ok');
  t.is(res.body.version, pkg.version);
  t.is(res.body.env, 'test');
  t.deepEqual(res.body.failed, []);
  t.deepEqual(res.body.checks.map((c: { name: string }) => c.name).sort(), CHECKS);
  for (const check of res.body.checks) {
    t.true(check.ok, check.name);
    t.is(check.error, undefined);
    t.true(typeof check.durationMs === 'number' && check.durationMs >= 0);
  }
});

test('/health and /ready need a User-Agent: 400 validation_error without one', async (t) => {
  for (const route of ['/health', '/ready']) {
    const res = await get(p.url, route, null);
    t.is(res.status, 400, route);
    t.is(res.body.name, 'validation_error', route);
  }
});

test('Redis down: /ready answers 503 degraded naming redis; /health still answers', async (t) => {
  const port = await deadPort();
  const config = { ...p.config, REDIS_URL: `redis://:${SECRET}@127.0.0.1:${port}` };
  const redis = createRedis(config);
  redis.on('error', () => {}); // refused connections are the point here
  const api = await serve({ ...p.deps, config, redis });
  try {
    isDegraded(t, await get(api.url, '/ready'), 'redis');
    t.is((await get(api.url, '/health')).status, 200);
  } finally {
    await api.close();
    redis.disconnect();
  }
});

test('Redis that accepts and never answers: the check times out at 2 s', async (t) => {
  const sockets = new Set<net.Socket>();
  const silent = net.createServer((s) => sockets.add(s)).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => silent.once('listening', () => resolve()));
  const config = { ...p.config, REDIS_URL: `redis://127.0.0.1:${(silent.address() as AddressInfo).port}` };
  const redis = createRedis(config);
  redis.on('error', () => {});
  const api = await serve({ ...p.deps, config, redis });
  try {
    const res = await get(api.url, '/ready');
    isDegraded(t, res, 'redis', /timed out/);
    t.true(res.ms >= 1900, `waited for the timeout (${Math.round(res.ms)} ms)`);
  } finally {
    await api.close();
    redis.disconnect();
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  }
});

test('blob store unwritable: /ready answers 503 degraded naming blob_store', async (t) => {
  const file = path.join(scratch, 'a-file');
  await writeFile(file, 'not a directory');
  const blobs = createFsBlobStore(path.join(file, 'blobs'));
  const api = await serve({ ...p.deps, config: { ...p.config, BLOB_DIR: path.join(file, 'blobs') }, blobs });
  try {
    isDegraded(t, await get(api.url, '/ready'), 'blob_store');
  } finally {
    await api.close();
  }
});

test("database down: /ready answers 503 degraded naming database, without the URL's password", async (t) => {
  const url = new URL(p.config.DATABASE_URL);
  url.password = SECRET;
  url.pathname = `/pw_missing_${Date.now()}`;
  const config = { ...p.config, DATABASE_URL: url.toString() };
  const db = createDb(config);
  const api = await serve({ ...p.deps, config, db });
  try {
    isDegraded(t, await get(api.url, '/ready'), 'database');
    t.is((await get(api.url, '/health')).status, 200);
  } finally {
    await api.close();
    await db.destroy();
  }
});
