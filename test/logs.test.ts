// Request logs (shared/logs): what is recorded, for whom, and what is kept of the bodies.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { newId } from '../shared/ids.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

const uniqueAgent = (label: string) => `logs-test-${label}/${randomBytes(4).toString('hex')}`;

test("GET /logs lists the team's requests newest first, with method, endpoint, status, agent and duration", async (t) => {
  const team = await p.createTeam();
  const other = await p.createTeam();
  await p.request('GET', '/team', { key: other.key });
  const userAgent = uniqueAgent('list');
  const missing = newId();
  const second = await p.request('POST', '/api-keys', { key: team.key, body: { name: 'second' }, userAgent });
  const made = [
    second,
    await p.request('GET', '/team', { key: team.key, userAgent }),
    await p.request('GET', `/api-keys/${missing}`, { key: team.key, userAgent }),
    await p.request('PATCH', `/api/v1/api-keys/${second.body.id}`, {
      key: team.key,
      body: { name: 'renamed' },
      userAgent,
    }),
    // A request with another of the team's keys is the team's too.
    await p.request('GET', '/api-keys?limit=1', { key: second.body.token, userAgent: 'second-key' }),
    await p.request('DELETE', `/api-keys/${second.body.id}`, { key: team.key, userAgent }),
    await p.request('POST', '/api-keys', { key: team.key, body: {}, userAgent }),
  ];
  const expected: [string, string, number, string][] = [
    ['POST', '/api-keys', 201, userAgent],
    ['GET', '/team', 200, userAgent],
    ['GET', '/api-keys/', 404, userAgent],
    ['PATCH', '/api/v1/api-keys/', 200, userAgent],
    ['GET', '/api-keys', 200, 'second-key'],
    ['DELETE', '/api-keys/', 200, userAgent],
    ['POST', '/api-keys', 422, userAgent],
  ];
  const list = await p.request('GET', '/logs?limit=100', { key: team.key });
  t.is(list.status, 200);
  t.is(list.body.object, 'list');
  t.false(list.body.has_more);
  t.is(list.body.data.length, made.length);
  const oldestFirst = [...list.body.data].reverse();
  for (const [i, item] of oldestFirst.entries()) {
    const [method, endpoint, status, agent] = expected[i];
    t.deepEqual(Object.keys(item).sort(), [
      'created_at',
      'duration_ms',
      'endpoint',
      'id',
      'method',
      'oauth_grant_id',
      'response_status',
      'user_agent',
    ]);
    t.is(item.method, method);
    t.true(item.endpoint.startsWith(endpoint), `${item.endpoint} vs ${endpoint}`);
    t.is(item.response_status, status);
    t.is(made[i].status, status);
    t.is(item.user_agent, agent);
    t.is(item.oauth_grant_id, null, 'made with an API key');
    t.true(Number.isInteger(item.duration_ms) && item.duration_ms >= 0);
    t.is(item.id, made[i].headers.get('x-request-log-id'));
  }
  t.is(oldestFirst[2].endpoint, `/api-keys/${missing}`);
  t.is(oldestFirst[3].endpoint, `/api/v1/api-keys/${second.body.id}`);
  const times = list.body.data.map((l: { created_at: string }) => Date.parse(l.created_at));
  t.deepEqual(
    times,
    [...times].sort((a, b) => b - a),
  );
  // The listing request itself is the newest entry next time.
  const again = await p.request('GET', '/logs?limit=1', { key: team.key });
  t.is(again.body.data[0].id, list.headers.get('x-request-log-id'));
  t.is(again.body.data[0].endpoint, '/logs');
});

test('GET /logs/{id} shows the bodies with secrets redacted; the token is nowhere in the stored row', async (t) => {
  const team = await p.createTeam();
  const body = {
    name: 'ci',
    password: 'hunter2-pw',
    nested: { client_secret: 's3cr3t-abc', list: [{ api_key: 'ak-123456', note: 'kept' }] },
    signing_key: 'sk-999',
  };
  const created = await p.request('POST', '/api-keys', { key: team.key, body });
  t.is(created.status, 201);
  const token: string = created.body.token;
  const logId = created.headers.get('x-request-log-id');
  // The new key's own requests are logged without it too.
  const used = await p.request('GET', '/team', { key: token });

  const log = await p.request('GET', `/logs/${logId}`, { key: team.key });
  t.is(log.status, 200);
  t.like(log.body, { object: 'log', id: logId, method: 'POST', endpoint: '/api-keys', response_status: 201 });
  t.deepEqual(log.body.request_body, {
    name: 'ci',
    password: '[redacted]',
    nested: { client_secret: '[redacted]', list: [{ api_key: '[redacted]', note: 'kept' }] },
    signing_key: '[redacted]',
  });
  t.deepEqual(log.body.response_body, { id: created.body.id, token: '[redacted]' });

  const secrets = [token, team.key, 'hunter2-pw', 's3cr3t-abc', 'ak-123456', 'sk-999'];
  const rows = await p.db('request_logs').where({ team_id: team.id });
  t.is(rows.length, 3);
  for (const row of rows) {
    const stored = JSON.stringify(row);
    for (const secret of secrets) t.false(stored.includes(secret), `${secret} in ${stored}`);
  }
  for (const res of [
    log,
    await p.request('GET', '/logs', { key: team.key }),
    await p.request('GET', `/logs/${used.headers.get('x-request-log-id')}`, { key: team.key }),
  ]) {
    for (const secret of secrets) t.false(res.text.includes(secret));
  }

  // A GET has no request body; an error's response body is the Error as sent.
  const refused = await p.request('POST', '/api-keys', { key: team.key, body: { name: 7 } });
  const refusedLog = await p.request('GET', `/logs/${refused.headers.get('x-request-log-id')}`, { key: team.key });
  t.deepEqual(refusedLog.body.request_body, { name: 7 });
  t.deepEqual(refusedLog.body.response_body, refused.body);
  const usedLog = await p.request('GET', `/api/v1/logs/${used.headers.get('x-request-log-id')}`, { key: team.key });
  t.is(usedLog.body.request_body, null);
  t.is(usedLog.body.response_body.id, team.id);
});

test("another team's log or an unknown id is 404 not_found, a malformed id 422 invalid_parameter", async (t) => {
  const mine = await p.createTeam();
  const theirs = await p.createTeam();
  const theirLog = (await p.request('GET', '/team', { key: theirs.key })).headers.get('x-request-log-id');
  t.is((await p.request('GET', `/logs/${theirLog}`, { key: theirs.key })).status, 200);
  for (const id of [theirLog, newId()]) {
    const res = await p.request('GET', `/logs/${id}`, { key: mine.key });
    t.is(res.status, 404);
    t.deepEqual(res.body, { statusCode: 404, name: 'not_found', message: res.body.message });
    t.false(res.text.includes(theirs.id));
  }
  for (const id of ['nope', `${theirLog}'--`]) {
    const res = await p.request('GET', `/logs/${id}`, { key: mine.key });
    t.like(res, {
      status: 422,
      body: { name: 'invalid_parameter', message: 'The `id` in the path must be a valid UUID.' },
    });
    t.false(res.text.includes(theirs.id));
  }
  const list = await p.request('GET', '/logs?limit=100', { key: mine.key });
  t.false(list.body.data.some((l: { id: string }) => l.id === theirLog));
});

test('requests without a valid key are not logged under any team', async (t) => {
  const team = await p.createTeam();
  const revoked = await p.request('POST', '/api-keys', { key: team.key, body: { name: 'revoked' } });
  await p.request('DELETE', `/api-keys/${revoked.body.id}`, { key: team.key });
  const suspended = await p.createTeam();
  await p.db('teams').where({ id: suspended.id }).update({ status: 'suspended' });
  const userAgent = uniqueAgent('anonymous');
  const answers = [
    await p.request('GET', '/team', { userAgent }),
    await p.request('GET', '/team', { userAgent, key: 'rk_doesnotexist' }),
    await p.request('GET', '/team', { userAgent, headers: { authorization: `Token ${team.key}` } }),
    await p.request('POST', '/api-keys', { userAgent, key: revoked.body.token, body: { name: 'x' } }),
    await p.request('GET', '/api-keys', { userAgent, key: suspended.key }),
    await p.request('GET', '/health', { userAgent }),
  ];
  t.deepEqual(
    answers.map((r) => r.status),
    [401, 403, 403, 403, 403, 200],
  );
  for (const res of answers) t.is(res.headers.get('x-request-log-id'), null);
  const count = async () =>
    Number((await p.db('request_logs').where({ user_agent: userAgent }).count<{ n: string }[]>('* as n'))[0].n);
  t.is(await count(), 0);
  // The same agent with a valid key is logged: the count above can see it.
  await p.request('GET', '/team', { userAgent, key: team.key });
  t.is(await count(), 1);
});

test('long strings, large or deep bodies, long agents and long paths are cut', async (t) => {
  const team = await p.createTeam();
  const logOf = async (res: { headers: Headers }) =>
    (await p.request('GET', `/logs/${res.headers.get('x-request-log-id')}`, { key: team.key })).body;

  const longName = await p.request('POST', '/api-keys', { key: team.key, body: { name: 'n'.repeat(3000) } });
  t.is(longName.status, 422);
  t.is((await logOf(longName)).request_body.name, `${'n'.repeat(2048)}…[3000 chars]`);

  const large = await p.request('POST', '/api-keys', {
    key: team.key,
    body: { name: 'large', parts: Array.from({ length: 40 }, () => 'p'.repeat(2048)) },
  });
  t.is(large.status, 201);
  const largeLog = await logOf(large);
  t.is(largeLog.request_body.truncated, true);
  t.true(largeLog.request_body.bytes > 64 * 1024);
  t.deepEqual(largeLog.response_body, { id: large.body.id, token: '[redacted]' });

  let deep: Record<string, unknown> = { bottom: 'deepest' };
  for (let i = 0; i < 30; i++) deep = { d: deep };
  const deepRes = await p.request('POST', '/api-keys', { key: team.key, body: { name: 'deep', deep } });
  const deepLog = JSON.stringify((await logOf(deepRes)).request_body);
  t.true(deepLog.includes('[truncated]'));
  t.false(deepLog.includes('deepest'));

  const agent = await p.request('GET', '/team', { key: team.key, userAgent: 'a'.repeat(2000) });
  t.is((await logOf(agent)).user_agent, 'a'.repeat(1024));

  const longPath = await p.request('GET', `/api-keys/${'x'.repeat(3000)}`, { key: team.key });
  t.is(longPath.status, 422);
  const pathLog = await logOf(longPath);
  t.is(pathLog.endpoint.length, 2048);
  t.true(pathLog.endpoint.startsWith('/api-keys/xxx'));

  const stored = await p.db('request_logs').where({ team_id: team.id });
  for (const row of stored) t.true(JSON.stringify(row).length < 80 * 1024);
});
