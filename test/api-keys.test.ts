import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

test('create answers the token once; list, retrieve and the database never show it', async (t) => {
  const team = await p.createTeam();
  const created = await p.request('POST', '/api-keys', { key: team.key, body: { name: 'ci' } });
  t.is(created.status, 201);
  t.regex(created.body.token, /^rk_[0-9A-Za-z]{43}$/);
  t.truthy(created.body.id);

  const got = await p.request('GET', `/api-keys/${created.body.id}`, { key: team.key });
  t.is(got.status, 200);
  t.like(got.body, {
    object: 'api_key',
    id: created.body.id,
    name: 'ci',
    permission: 'full_access',
    status: 'active',
    domain_id: null,
    key_prefix: created.body.token.slice(0, 8),
  });
  t.false(got.text.includes(created.body.token));

  const list = await p.request('GET', '/api-keys', { key: team.key });
  t.is(list.status, 200);
  t.is(list.body.object, 'list');
  t.false(list.text.includes(created.body.token));
  t.deepEqual(
    list.body.data.map((k: { id: string }) => k.id).sort(),
    [created.body.id, list.body.data.find((k: { name: string }) => k.name === 'Default').id].sort(),
  );

  const stored = await p.db('api_keys').where({ id: created.body.id }).first();
  t.not(stored.token_hash, created.body.token);
  t.false(JSON.stringify(stored).includes(created.body.token));
  t.regex(stored.token_hash, /^[0-9a-f]{64}$/);

  // The new key works on its own.
  const team2 = await p.request('GET', '/team', { key: created.body.token });
  t.is(team2.status, 200);
  t.is(team2.body.id, team.id);
});

test('rename and revoke; a revoked key is refused with 403 invalid_api_key', async (t) => {
  const team = await p.createTeam();
  const created = await p.request('POST', '/api-keys', { key: team.key, body: { name: 'old' } });
  const renamed = await p.request('PATCH', `/api-keys/${created.body.id}`, { key: team.key, body: { name: 'new' } });
  t.is(renamed.status, 200);
  t.deepEqual(renamed.body, { object: 'api_key', id: created.body.id });
  t.is((await p.request('GET', `/api-keys/${created.body.id}`, { key: team.key })).body.name, 'new');

  const before = await p.request('GET', '/team', { key: created.body.token });
  t.is(before.status, 200);
  const revoked = await p.request('DELETE', `/api-keys/${created.body.id}`, { key: team.key });
  t.deepEqual(revoked.body, { object: 'api_key', id: created.body.id, deleted: true });
  const after = await p.request('GET', '/team', { key: created.body.token });
  t.is(after.status, 403);
  t.is(after.body.name, 'invalid_api_key');
  t.is((await p.request('GET', `/api-keys/${created.body.id}`, { key: team.key })).body.status, 'revoked');
});

test('a sending_access key reaches only the send routes; domain_id needs sending_access and a domain of the team', async (t) => {
  const team = await p.createTeam();
  const sending = await p.request('POST', '/api-keys', {
    key: team.key,
    body: { name: 's', permission: 'sending_access' },
  });
  t.is(sending.status, 201);
  const refused = await p.request('GET', '/api-keys', { key: sending.body.token });
  t.is(refused.status, 401);
  t.is(refused.body.name, 'restricted_api_key');

  const badBinding = await p.request('POST', '/api-keys', {
    key: team.key,
    body: { name: 'x', permission: 'full_access', domain_id: '01a20175-4fa7-770b-9ed8-6056a5f88181' },
  });
  t.is(badBinding.status, 422);
  t.is(badBinding.body.name, 'validation_error');
  const unknownDomain = await p.request('POST', '/api-keys', {
    key: team.key,
    body: { name: 'x', permission: 'sending_access', domain_id: '01a20175-4fa7-770b-9ed8-6056a5f88181' },
  });
  t.is(unknownDomain.status, 404);
  const badPermission = await p.request('POST', '/api-keys', {
    key: team.key,
    body: { name: 'x', permission: 'root' },
  });
  t.is(badPermission.status, 422);
  t.is(badPermission.body.errors[0].path, 'permission');
});

test('a key of a suspended team is refused with 403 suspended_api_key and reads as suspended', async (t) => {
  const team = await p.createTeam();
  await p.db('teams').where({ id: team.id }).update({ status: 'suspended' });
  const res = await p.request('GET', '/api-keys', { key: team.key });
  t.is(res.status, 403);
  t.is(res.body.name, 'suspended_api_key');
  await p.db('teams').where({ id: team.id }).update({ status: 'active' });
  t.is((await p.request('GET', '/api-keys', { key: team.key })).status, 200);
});

test("last_used_at and last_used_request_log_id follow the key's requests", async (t) => {
  const team = await p.createTeam();
  const first = await p.request('GET', '/team', { key: team.key });
  const logId = first.headers.get('x-request-log-id');
  t.truthy(logId);
  const keys = await p.request('GET', '/api-keys', { key: team.key });
  const key = keys.body.data[0];
  t.truthy(key.last_used_at);
  // The list request itself is the latest use once it is logged.
  const again = await p.request('GET', `/api-keys/${key.id}`, { key: team.key });
  t.is(again.body.last_used_request_log_id, keys.headers.get('x-request-log-id'));
  const log = await p.request('GET', `/logs/${again.body.last_used_request_log_id}`, { key: team.key });
  t.is(log.status, 200);
  t.is(log.body.endpoint, '/api-keys');
});

test('every permission of the ApiKey shape: store_access and inbox channels refused until built; inbox_access stored, none by default', async (t) => {
  const team = await p.createTeam();
  const create = (body: Record<string, unknown>) =>
    p.request('POST', '/api-keys', { key: team.key, body: { name: 'perm', ...body } });
  const store = await create({ permission: 'store_access' });
  t.is(store.status, 422, store.text);
  t.is(store.body.name, 'validation_error');
  t.is(store.body.errors[0].path, 'permission');
  t.regex(store.body.message, /stores are not built/);
  const channels = await create({ inbox_access: 'read', inbox_channel_ids: ['0193a1b2-0000-7000-8000-000000000001'] });
  t.is(channels.status, 422, channels.text);
  t.is(channels.body.errors[0].path, 'inbox_channel_ids.0');
  t.is((await create({ inbox_access: 'everything' })).status, 422);
  t.is(
    await p
      .db('api_keys')
      .where({ team_id: team.id, name: 'perm' })
      .count({ n: '*' })
      .then((r) => Number(r[0].n)),
    0,
    'nothing refused was stored',
  );

  const plain = await create({});
  const reader = await create({ inbox_access: 'write', inbox_channel_ids: null });
  const empty = await create({ inbox_access: 'create', inbox_channel_ids: [] });
  for (const [res, access, ids] of [
    [plain, 'none', null],
    [reader, 'write', null],
    [empty, 'create', []],
  ] as const) {
    t.is(res.status, 201, res.text);
    const got = await p.request('GET', `/api-keys/${res.body.id}`, { key: team.key });
    t.like(got.body, { inbox_access: access, permission: 'full_access' });
    t.deepEqual(got.body.inbox_channel_ids, ids);
  }
});
