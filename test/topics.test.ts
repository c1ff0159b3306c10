// Topics (`/topics`): create, list, retrieve, update, delete, as the Resend API has them, scoped by team; and the
// official `resend` SDK against them.
import { randomUUID } from 'node:crypto';
import test from 'ava';
import { Resend } from 'resend';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { isError } from './helpers/http.ts';
import { getTopic } from '../shared/topics/topics.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function createTopic(team: TestTeam, body: Record<string, unknown> = {}): Promise<string> {
  const res = await p.request('POST', '/topics', {
    key: team.key,
    body: { name: 'News', default_subscription: 'opt_in', ...body },
  });
  if (res.status !== 201) throw new Error(`POST /topics answered ${res.status} ${res.text}`);
  return res.body.id;
}

test('create answers 201 {object, id}; the topic reads back with every field; visibility defaults to private', async (t) => {
  const team = await p.createTeam();
  const created = await p.request('POST', '/topics', {
    key: team.key,
    body: { name: 'Product updates', default_subscription: 'opt_out', description: 'Monthly' },
  });
  t.is(created.status, 201, created.text);
  t.deepEqual(Object.keys(created.body).sort(), ['id', 'object']);
  t.is(created.body.object, 'topic');
  const id = created.body.id;

  const got = await p.request('GET', `/topics/${id}`, { key: team.key });
  t.is(got.status, 200);
  t.deepEqual(Object.keys(got.body).sort(), [
    'created_at',
    'default_subscription',
    'description',
    'id',
    'name',
    'object',
    'visibility',
  ]);
  t.like(got.body, {
    object: 'topic',
    id,
    name: 'Product updates',
    description: 'Monthly',
    default_subscription: 'opt_out',
    visibility: 'private',
  });
  t.regex(got.body.created_at, iso);

  // Optional fields: no description is null; visibility as given; the name trimmed; under /api/v1 too.
  const other = await p.request('POST', '/api/v1/topics', {
    key: team.key,
    body: { name: '  Offers ', default_subscription: 'opt_in', visibility: 'public', description: null },
  });
  t.is(other.status, 201, other.text);
  const read = await p.request('GET', `/api/v1/topics/${other.body.id}`, { key: team.key });
  t.like(read.body, { name: 'Offers', description: null, default_subscription: 'opt_in', visibility: 'public' });

  // Unknown keys are ignored.
  const extra = await p.request('POST', '/topics', {
    key: team.key,
    body: { name: 'Extra', default_subscription: 'opt_in', defaultSubscription: 'opt_out', colour: 'red' },
  });
  t.is(extra.status, 201, extra.text);
  t.like((await p.request('GET', `/topics/${extra.body.id}`, { key: team.key })).body, {
    default_subscription: 'opt_in',
  });

  // The shared lookup other areas use (a send's topic_id): the row for the team, null for anything else.
  t.like(await getTopic(p.db, team.id, id), { id, team_id: team.id, name: 'Product updates' });
  t.is(await getTopic(p.db, team.id, randomUUID()), null);
  t.is(await getTopic(p.db, team.id, 'not-a-uuid'), null);
  t.is(await getTopic(p.db, (await p.createTeam()).id, id), null);
});

test('create refuses a missing or bad field in the Error shape, naming the field', async (t) => {
  const team = await p.createTeam();
  const cases: [Record<string, unknown>, string, string][] = [
    [{ default_subscription: 'opt_in' }, 'missing_required_field', 'name'],
    [{ name: 'x' }, 'missing_required_field', 'default_subscription'],
    [{ name: '', default_subscription: 'opt_in' }, 'validation_error', 'name'],
    [{ name: '   ', default_subscription: 'opt_in' }, 'validation_error', 'name'],
    [{ name: 'x'.repeat(51), default_subscription: 'opt_in' }, 'validation_error', 'name'],
    [{ name: 7, default_subscription: 'opt_in' }, 'validation_error', 'name'],
    [{ name: 'x', default_subscription: 'maybe' }, 'validation_error', 'default_subscription'],
    [{ name: 'x', default_subscription: 'opt_in', description: 'd'.repeat(201) }, 'validation_error', 'description'],
    [{ name: 'x', default_subscription: 'opt_in', visibility: 'secret' }, 'validation_error', 'visibility'],
  ];
  for (const [body, error, path] of cases) {
    const res = await p.request('POST', '/topics', { key: team.key, body });
    isError(t, res, 422, error);
    t.deepEqual(
      res.body.errors.map((e: { path: string }) => e.path),
      [path],
      JSON.stringify(body),
    );
    t.true(res.body.message.includes(path), res.body.message);
  }
  // An empty body (the SDK may post one) is a missing field, not a parse error.
  isError(t, await p.request('POST', '/topics', { key: team.key }), 422, 'missing_required_field');
  // The limits themselves are accepted.
  t.truthy(await createTopic(team, { name: 'n'.repeat(50), description: 'd'.repeat(200) }));
  t.is((await p.db('topics').where({ team_id: team.id })).length, 1);
});

test('list pages newest first with limit, after and before', async (t) => {
  const team = await p.createTeam();
  const empty = await p.request('GET', '/topics', { key: team.key });
  t.deepEqual(empty.body, { object: 'list', has_more: false, data: [] });

  const ids: string[] = [];
  for (let i = 0; i < 5; i++)
    ids.push(await createTopic(team, { name: `Topic ${i}`, description: i % 2 ? `d${i}` : undefined }));
  const newest = [...ids].reverse();

  const all = await p.request('GET', '/topics', { key: team.key });
  t.like(all.body, { object: 'list', has_more: false });
  t.deepEqual(
    all.body.data.map((x: { id: string }) => x.id),
    newest,
  );
  t.deepEqual(Object.keys(all.body.data[0]).sort(), [
    'created_at',
    'default_subscription',
    'description',
    'id',
    'name',
    'visibility',
  ]);
  t.like(all.body.data[0], {
    id: ids[4],
    name: 'Topic 4',
    description: null,
    default_subscription: 'opt_in',
    visibility: 'private',
  });
  t.like(all.body.data[1], { name: 'Topic 3', description: 'd3' });

  const first = await p.request('GET', '/topics?limit=2', { key: team.key });
  t.true(first.body.has_more);
  t.deepEqual(
    first.body.data.map((x: { id: string }) => x.id),
    newest.slice(0, 2),
  );
  const second = await p.request('GET', `/topics?limit=2&after=${newest[1]}`, { key: team.key });
  t.true(second.body.has_more);
  t.deepEqual(
    second.body.data.map((x: { id: string }) => x.id),
    newest.slice(2, 4),
  );
  const last = await p.request('GET', `/topics?limit=2&after=${newest[3]}`, { key: team.key });
  t.false(last.body.has_more);
  t.deepEqual(
    last.body.data.map((x: { id: string }) => x.id),
    newest.slice(4),
  );
  const back = await p.request('GET', `/topics?limit=2&before=${newest[2]}`, { key: team.key });
  t.deepEqual(
    back.body.data.map((x: { id: string }) => x.id),
    newest.slice(0, 2),
  );

  isError(t, await p.request('GET', '/topics?limit=0', { key: team.key }), 422, 'validation_error');
  isError(t, await p.request('GET', '/topics?limit=101', { key: team.key }), 422, 'validation_error');
  isError(t, await p.request('GET', '/topics?after=nope', { key: team.key }), 422, 'validation_error');
  isError(
    t,
    await p.request('GET', `/topics?after=${ids[0]}&before=${ids[1]}`, { key: team.key }),
    422,
    'validation_error',
  );
});

test('update changes name, description and visibility, ignores unknown keys, and answers {object, id}', async (t) => {
  const team = await p.createTeam();
  const id = await createTopic(team, { description: 'old' });
  const before = await p.db('topics').where({ id }).first();

  const res = await p.request('PATCH', `/topics/${id}`, {
    key: team.key,
    body: { name: 'Renamed', visibility: 'public' },
  });
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body, { object: 'topic', id });
  t.like((await p.request('GET', `/topics/${id}`, { key: team.key })).body, {
    name: 'Renamed',
    description: 'old',
    visibility: 'public',
    default_subscription: 'opt_in',
  });
  const after = await p.db('topics').where({ id }).first();
  t.true(after.updated_at >= before.updated_at);
  t.deepEqual(after.created_at, before.created_at);

  // null clears the description; what the SDK sends besides (`id`, camelCase keys) is ignored.
  const sdkLike = await p.request('PATCH', `/topics/${id}`, {
    key: team.key,
    body: { id, description: null, defaultSubscription: 'opt_out', createdAt: 'x' },
  });
  t.is(sdkLike.status, 200, sdkLike.text);
  t.like((await p.request('GET', `/topics/${id}`, { key: team.key })).body, {
    name: 'Renamed',
    description: null,
    default_subscription: 'opt_in',
  });
  // An `id` in the body naming another topic does not redirect the change: the path names the topic.
  const otherId = await createTopic(team, { name: 'Other' });
  t.deepEqual(
    (await p.request('PATCH', `/topics/${id}`, { key: team.key, body: { id: otherId, name: 'Path wins' } })).body,
    { object: 'topic', id },
  );
  t.is((await p.request('GET', `/topics/${otherId}`, { key: team.key })).body.name, 'Other');

  // An empty body changes nothing and still answers.
  t.deepEqual((await p.request('PATCH', `/topics/${id}`, { key: team.key, body: {} })).body, { object: 'topic', id });

  // The create limits hold here too.
  for (const [body, path] of [
    [{ name: '' }, 'name'],
    [{ name: 'x'.repeat(51) }, 'name'],
    [{ description: 'd'.repeat(201) }, 'description'],
    [{ visibility: 'secret' }, 'visibility'],
    [{ name: null }, 'name'],
  ] as const) {
    const bad = await p.request('PATCH', `/topics/${id}`, { key: team.key, body });
    isError(t, bad, 422, 'validation_error');
    t.is(bad.body.errors[0].path, path);
  }
  t.like((await p.request('GET', `/topics/${id}`, { key: team.key })).body, { name: 'Path wins' });
});

test('default_subscription cannot be changed: a PATCH naming it is 422 validation_error and changes nothing', async (t) => {
  const team = await p.createTeam();
  const id = await createTopic(team, { default_subscription: 'opt_out' });
  for (const value of ['opt_in', 'opt_out', null]) {
    const res = await p.request('PATCH', `/topics/${id}`, {
      key: team.key,
      body: { name: 'Changed', default_subscription: value },
    });
    isError(t, res, 422, 'validation_error');
    t.deepEqual(res.body.errors, [
      { path: 'default_subscription', message: 'cannot be changed after the topic is created' },
    ]);
    t.regex(res.body.message, /default_subscription.*cannot be changed/);
  }
  t.like((await p.request('GET', `/topics/${id}`, { key: team.key })).body, {
    name: 'News',
    default_subscription: 'opt_out',
  });
});

test('delete answers {object, id, deleted: true}; the topic is gone', async (t) => {
  const team = await p.createTeam();
  const id = await createTopic(team);
  const keep = await createTopic(team, { name: 'Keep' });
  const res = await p.request('DELETE', `/topics/${id}`, { key: team.key });
  t.is(res.status, 200);
  t.deepEqual(res.body, { object: 'topic', id, deleted: true });
  isError(t, await p.request('GET', `/topics/${id}`, { key: team.key }), 404, 'not_found');
  isError(t, await p.request('DELETE', `/topics/${id}`, { key: team.key }), 404, 'not_found');
  isError(t, await p.request('PATCH', `/topics/${id}`, { key: team.key, body: { name: 'x' } }), 404, 'not_found');
  t.deepEqual(
    (await p.request('GET', '/topics', { key: team.key })).body.data.map((x: { id: string }) => x.id),
    [keep],
  );
});

test('an unknown id is 404 not_found, a malformed one 422 invalid_parameter, on get, update and delete', async (t) => {
  const team = await p.createTeam();
  await createTopic(team);
  for (const id of [randomUUID(), 'not-a-uuid', '123', '00000000-0000-0000-0000-00000000000g']) {
    for (const [method, body] of [['GET'], ['PATCH', { name: 'x' }], ['DELETE']] as const) {
      const res = await p.request(method, `/topics/${id}`, { key: team.key, body });
      if (id.length === 36 && !id.endsWith('g')) {
        isError(t, res, 404, 'not_found');
        t.is(res.body.message, 'Topic not found.');
      } else {
        isError(t, res, 422, 'invalid_parameter');
        t.is(res.body.message, 'The `id` in the path must be a valid UUID.');
      }
    }
  }
});

test("another team neither lists, reads, changes nor deletes a team's topic", async (t) => {
  const a = await p.createTeam('A');
  const b = await p.createTeam('B');
  const id = await createTopic(a, { name: 'A only' });
  const bOwn = await createTopic(b, { name: 'B only' });

  t.deepEqual(
    (await p.request('GET', '/topics', { key: b.key })).body.data.map((x: { id: string }) => x.id),
    [bOwn],
  );
  // A cursor naming another team's topic pages only the caller's own (B's topic is the newer one).
  t.deepEqual(
    (await p.request('GET', `/topics?before=${id}`, { key: b.key })).body.data.map((x: { id: string }) => x.id),
    [bOwn],
  );
  t.deepEqual((await p.request('GET', `/topics?after=${bOwn}`, { key: b.key })).body.data, []);
  isError(t, await p.request('GET', `/topics/${id}`, { key: b.key }), 404, 'not_found');
  isError(t, await p.request('PATCH', `/topics/${id}`, { key: b.key, body: { name: 'taken' } }), 404, 'not_found');
  isError(t, await p.request('DELETE', `/topics/${id}`, { key: b.key }), 404, 'not_found');

  const still = await p.request('GET', `/topics/${id}`, { key: a.key });
  t.is(still.status, 200);
  t.like(still.body, { name: 'A only' });
  t.deepEqual(
    (await p.request('GET', '/topics', { key: a.key })).body.data.map((x: { id: string }) => x.id),
    [id],
  );
});

test('a sending_access key is refused: topics need full_access', async (t) => {
  const team = await p.createTeam();
  const sending = await p.request('POST', '/api-keys', {
    key: team.key,
    body: { name: 'send only', permission: 'sending_access' },
  });
  t.is(sending.status, 201);
  isError(t, await p.request('GET', '/topics', { key: sending.body.token }), 401, 'restricted_api_key');
  isError(
    t,
    await p.request('POST', '/topics', {
      key: sending.body.token,
      body: { name: 'x', default_subscription: 'opt_in' },
    }),
    401,
    'restricted_api_key',
  );
});

test('the official resend SDK creates, lists, gets, updates and removes topics', async (t) => {
  const team = await p.createTeam();
  const resend = new Resend(team.key, { baseUrl: p.url } as never);

  const created = await resend.topics.create({
    name: 'Weekly digest',
    defaultSubscription: 'opt_in',
    description: 'Every Monday',
  });
  t.is(created.error, null, JSON.stringify(created.error));
  const id = created.data!.id;
  t.truthy(id);

  const listed = await resend.topics.list();
  t.is(listed.error, null, JSON.stringify(listed.error));
  t.deepEqual(
    listed.data!.data.map((x) => x.id),
    [id],
  );

  const got = await resend.topics.get(id);
  t.is(got.error, null, JSON.stringify(got.error));
  t.like(got.data, { id, name: 'Weekly digest', description: 'Every Monday', default_subscription: 'opt_in' });

  // The SDK sends its whole argument as the body: `id` and all.
  const updated = await resend.topics.update({ id, name: 'Daily digest', description: 'Every day' });
  t.is(updated.error, null, JSON.stringify(updated.error));
  t.is(updated.data!.id, id);
  t.like((await resend.topics.get(id)).data, {
    name: 'Daily digest',
    description: 'Every day',
    default_subscription: 'opt_in',
  });

  const missing = await resend.topics.get(randomUUID());
  t.like(missing.error, { name: 'not_found', statusCode: 404 });
  const invalid = await resend.topics.create({ name: 'x'.repeat(51), defaultSubscription: 'opt_in' });
  t.like(invalid.error, { name: 'validation_error', statusCode: 422 });

  const removed = await resend.topics.remove(id);
  t.is(removed.error, null, JSON.stringify(removed.error));
  t.like(removed.data, { object: 'topic', id, deleted: true });
  t.deepEqual((await resend.topics.list()).data!.data, []);
});
