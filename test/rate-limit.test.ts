// Per-team rate limit (api/middleware/rate-limit.ts): a one-second fixed window in Redis shared by every api copy.
import test, { type ExecutionContext } from 'ava';
import { startPlatform, type Platform, type TestResponse } from './helpers/platform.ts';
import { serve, startOfSecond, type Served } from './helpers/http.ts';
import { createApp } from '../api/app.ts';
import { createDb } from '../shared/db/knex.ts';
import { createRedis } from '../shared/redis.ts';
import { newId } from '../shared/ids.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
  // Warm the pools so the first timed burst is not slowed by connecting.
  const warm = await p.createTeam();
  await Promise.all(Array.from({ length: 5 }, () => p.request('GET', '/team', { key: warm.key })));
});
test.after.always(async () => {
  await p?.close();
});

async function teamWithLimit(rps: number | null) {
  const team = await p.createTeam();
  await p.db('teams').where({ id: team.id }).update({ rate_limit_rps: rps });
  return team;
}

/**
 * Runs `burst` inside one wall-clock second (the server shares this process's clock). A burst that slipped
 * past the boundary is run again from the next second, at most five times.
 */
async function withinOneSecond<T>(t: ExecutionContext, burst: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    await startOfSecond();
    const start = Date.now();
    const result = await burst();
    if (Math.floor(Date.now() / 1000) === Math.floor(start / 1000)) return result;
    t.log(`burst crossed a second boundary (attempt ${attempt}); retrying`);
    if (attempt === 5) throw new Error('could not fit the burst in one second five times');
  }
}

function limited(t: ExecutionContext, res: TestResponse, limit: number) {
  t.is(res.status, 429, res.text);
  t.deepEqual(res.body, { statusCode: 429, name: 'rate_limit_exceeded', message: res.body.message });
  t.regex(res.body.message, new RegExp(`${limit} requests per second`));
  t.is(res.headers.get('retry-after'), '1');
  t.is(res.headers.get('ratelimit-remaining'), '0');
  t.is(res.headers.get('ratelimit-limit'), String(limit));
}

function headers(res: TestResponse) {
  return ['limit', 'remaining', 'reset', 'policy'].map((h) => res.headers.get(`ratelimit-${h}`));
}

test.serial(
  'a team with a limit of N gets N answers, then 429 rate_limit_exceeded with retry-after, until the next second',
  async (t) => {
    const team = await teamWithLimit(5);
    const results = await withinOneSecond(t, async () => {
      const out: TestResponse[] = [];
      for (let i = 0; i < 7; i++) out.push(await p.request('GET', i % 2 ? '/api/v1/team' : '/team', { key: team.key }));
      return out;
    });
    t.deepEqual(
      results.slice(0, 5).map((r) => r.status),
      [200, 200, 200, 200, 200],
    );
    t.deepEqual(
      results.slice(0, 5).map(headers),
      [4, 3, 2, 1, 0].map((left) => ['5', String(left), '1', '5;w=1']),
    );
    for (const r of results.slice(0, 5)) t.is(r.headers.get('retry-after'), null);
    limited(t, results[5], 5);
    limited(t, results[6], 5);
    t.is(results[6].headers.get('ratelimit-policy'), '5;w=1');

    // A new second, a new window.
    await startOfSecond();
    const next = await p.request('GET', '/team', { key: team.key });
    t.is(next.status, 200);
    t.is(next.headers.get('ratelimit-remaining'), '4');
    t.is(next.body.sending.rate_limit.requests_per_second, 5);
  },
);

test.serial('concurrent requests are counted atomically', async (t) => {
  const team = await teamWithLimit(4);
  const results = await withinOneSecond(t, () =>
    Promise.all(Array.from({ length: 10 }, () => p.request('GET', '/team', { key: team.key }))),
  );
  t.is(results.filter((r) => r.status === 200).length, 4);
  t.is(results.filter((r) => r.status === 429).length, 6);
  t.deepEqual(
    results
      .filter((r) => r.status === 200)
      .map((r) => r.headers.get('ratelimit-remaining'))
      .sort(),
    ['0', '1', '2', '3'],
  );
});

test.serial('every authenticated response carries the ratelimit headers; unauthenticated ones do not', async (t) => {
  const team = await teamWithLimit(null); // the platform default, RATE_LIMIT_RPS=1000 in tests
  const sending = await p.request('POST', '/api-keys', {
    key: team.key,
    body: { name: 's', permission: 'sending_access' },
  });
  const authenticated = [
    sending,
    await p.request('GET', '/team', { key: team.key }),
    await p.request('GET', '/api-keys', { key: team.key }),
    await p.request('GET', `/api-keys/${newId()}`, { key: team.key }),
    await p.request('GET', '/api-keys?limit=0', { key: team.key }),
    await p.request('POST', '/api-keys', { key: team.key, body: {} }),
    await p.request('DELETE', `/api-keys/${newId()}`, { key: team.key }),
    await p.request('GET', '/api/v1/logs', { key: team.key }),
    await p.request('GET', '/team', { key: sending.body.token }), // a valid key outside its routes
  ];
  t.deepEqual(
    authenticated.map((r) => r.status),
    [201, 200, 200, 404, 422, 422, 404, 200, 401],
  );
  for (const res of authenticated) {
    const [limit, remaining, reset, policy] = headers(res);
    t.is(limit, '1000', res.text);
    t.regex(remaining ?? '', /^\d+$/);
    t.true(Number(remaining) < 1000);
    t.is(reset, '1');
    t.is(policy, '1000;w=1');
  }
  const anonymous = [
    await p.request('GET', '/health'),
    await p.request('GET', '/team'),
    await p.request('GET', '/team', { key: 'rk_not-a-key' }),
    await p.request('GET', '/nope', { key: team.key }),
  ];
  t.deepEqual(
    anonymous.map((r) => r.status),
    [200, 401, 403, 404],
  );
  for (const res of anonymous) t.deepEqual(headers(res), [null, null, null, null]);
});

test.serial('two api copies on the same Redis and database share one limit', async (t) => {
  // A second copy with its own Redis connection and database pool, as another api process would have.
  const redis = createRedis(p.config);
  const db = createDb(p.config);
  const other: Served = await serve(createApp({ ...p.deps, redis, db }));
  t.teardown(async () => {
    await other.close();
    await Promise.allSettled([redis.quit(), db.destroy()]);
  });
  const team = await teamWithLimit(6);
  // The second copy's pool connected and its paths run once, by another team's requests: a cold copy's first
  // authenticated answers (connecting to PostgreSQL) pushed the burst past its second on a loaded CI machine.
  const warm = await p.createTeam();
  await Promise.all(Array.from({ length: 4 }, () => other.request('GET', '/team', { key: warm.key })));
  const results = await withinOneSecond(t, async () => {
    const out: TestResponse[] = [];
    for (let i = 0; i < 8; i++) out.push(await (i % 2 ? other.request : p.request)('GET', '/team', { key: team.key }));
    return out;
  });
  t.deepEqual(
    results.map((r) => r.status),
    [200, 200, 200, 200, 200, 200, 429, 429],
  );
  t.deepEqual(
    results.map((r) => r.headers.get('ratelimit-remaining')),
    ['5', '4', '3', '2', '1', '0', '0', '0'],
  );
  limited(t, results[6], 6);
  limited(t, results[7], 6);
});

test.serial('teams do not share a limit', async (t) => {
  const x = await teamWithLimit(3);
  const y = await teamWithLimit(3);
  const [xs, ys] = await withinOneSecond(t, async () => {
    const a: TestResponse[] = [];
    const b: TestResponse[] = [];
    for (let i = 0; i < 4; i++) a.push(await p.request('GET', '/team', { key: x.key }));
    for (let i = 0; i < 4; i++) b.push(await p.request('GET', '/team', { key: y.key }));
    return [a, b];
  });
  t.deepEqual(
    xs.map((r) => r.status),
    [200, 200, 200, 429],
  );
  t.deepEqual(
    ys.map((r) => r.status),
    [200, 200, 200, 429],
  );
  t.deepEqual(
    ys.map((r) => r.headers.get('ratelimit-remaining')),
    ['2', '1', '0', '0'],
  );
  t.is(ys[0].body.id, y.id);
});
