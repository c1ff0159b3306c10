// List pagination (shared/pagination.ts) through GET /api-keys and GET /logs: limit, cursors, has_more.
import test from 'ava';
import { startPlatform, type Platform, type TestResponse } from './helpers/platform.ts';
import { newId } from '../shared/ids.ts';
import { createKey } from '../shared/api-keys/keys.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

/** A team with `extra` API keys besides its Default one; returns its key and every key id, newest first. */
async function teamWithKeys(extra: number): Promise<{ key: string; teamId: string; ids: string[] }> {
  const team = await p.createTeam();
  for (let i = 0; i < extra; i++) await createKey(p.db, team.id, { name: `k${i}` });
  const rows = await p
    .db('api_keys')
    .where({ team_id: team.id })
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .select('id');
  return { key: team.key, teamId: team.id, ids: rows.map((r) => r.id) };
}

const ids = (res: TestResponse): string[] => res.body.data.map((k: { id: string }) => k.id);

function isValidationError(t: import('ava').ExecutionContext, res: TestResponse, field: string) {
  t.is(res.status, 422, res.text);
  t.is(res.body.statusCode, 422);
  t.is(res.body.name, 'validation_error');
  t.is(typeof res.body.message, 'string');
  t.true(Array.isArray(res.body.errors) && res.body.errors.length > 0, res.text);
  t.is(res.body.errors[0].path, field);
  t.is(typeof res.body.errors[0].message, 'string');
}

test('limit defaults to 20 and accepts 1 to 100', async (t) => {
  const team = await teamWithKeys(104);
  t.is(team.ids.length, 105);
  const first = await p.request('GET', '/api-keys', { key: team.key });
  t.is(first.status, 200);
  t.deepEqual(ids(first), team.ids.slice(0, 20));
  t.true(first.body.has_more);
  for (const limit of [1, 2, 99, 100]) {
    const res = await p.request('GET', `/api/v1/api-keys?limit=${limit}`, { key: team.key });
    t.is(res.status, 200);
    t.deepEqual(ids(res), team.ids.slice(0, limit), `limit=${limit}`);
    t.true(res.body.has_more);
  }
  const small = await teamWithKeys(4);
  const all = await p.request('GET', '/api-keys?limit=5', { key: small.key });
  t.deepEqual(ids(all), small.ids);
  t.false(all.body.has_more);
  const more = await p.request('GET', '/api-keys?limit=4', { key: small.key });
  t.true(more.body.has_more);
});

test('an out-of-range or non-numeric limit is 422 validation_error with errors[]', async (t) => {
  const team = await teamWithKeys(0);
  for (const limit of [
    '0',
    '101',
    '1e9',
    '-1',
    'abc',
    '1.5',
    '',
    '%20',
    'Infinity',
    'NaN',
    '20abc',
    '0x10',
    '1e1',
    '%205',
    '%2B5',
    '0b11',
  ]) {
    isValidationError(t, await p.request('GET', `/api-keys?limit=${limit}`, { key: team.key }), 'limit');
    isValidationError(t, await p.request('GET', `/api/v1/logs?limit=${limit}`, { key: team.key }), 'limit');
  }
  isValidationError(t, await p.request('GET', '/api-keys?limit=1&limit=2', { key: team.key }), 'limit');
});

test('after and before together, or a cursor that is not a UUID, is 422 validation_error', async (t) => {
  const team = await teamWithKeys(2);
  const both = await p.request('GET', `/api-keys?after=${team.ids[0]}&before=${team.ids[2]}`, { key: team.key });
  isValidationError(t, both, 'after');
  t.regex(both.body.message, /after.*before/);
  isValidationError(t, await p.request('GET', `/logs?after=${newId()}&before=${newId()}`, { key: team.key }), 'after');
  for (const cursor of ['abc', '1', "'%20OR%201=1--", `${team.ids[0]}x`, team.ids[0].replace(/-/g, ''), '']) {
    isValidationError(t, await p.request('GET', `/api-keys?after=${cursor}`, { key: team.key }), 'after');
    isValidationError(t, await p.request('GET', `/api-keys?before=${cursor}`, { key: team.key }), 'before');
  }
  // A repeated cursor is a list, not a UUID.
  isValidationError(
    t,
    await p.request('GET', `/api-keys?after=${team.ids[0]}&after=${team.ids[1]}`, { key: team.key }),
    'after',
  );
  isValidationError(t, await p.request('GET', '/logs?after=nope', { key: team.key }), 'after');
});

test('walking forward with after and back with before visits every item once, newest first', async (t) => {
  const team = await teamWithKeys(10); // 11 keys: pages of 4, 4, 3
  const forward: TestResponse[] = [];
  let cursor: string | undefined;
  for (;;) {
    const res = await p.request('GET', `/api-keys?limit=4${cursor ? `&after=${cursor}` : ''}`, { key: team.key });
    t.is(res.status, 200);
    forward.push(res);
    if (!res.body.has_more) break;
    cursor = ids(res).at(-1);
    t.true(forward.length < 10);
  }
  t.deepEqual(
    forward.map((r) => ids(r).length),
    [4, 4, 3],
  );
  t.deepEqual(
    forward.map((r) => r.body.has_more),
    [true, true, false],
  );
  t.deepEqual(forward.flatMap(ids), team.ids);
  // Newest first, by created_at too (not only by id).
  const created = forward.flatMap((r) => r.body.data.map((k: { created_at: string }) => Date.parse(k.created_at)));
  t.deepEqual(
    created,
    [...created].sort((a, b) => b - a),
  );

  // Back from the oldest page: `before` the first id of a page gives the page above it, still newest first.
  const back: TestResponse[] = [];
  cursor = ids(forward.at(-1)!)[0];
  for (;;) {
    const res = await p.request('GET', `/api/v1/api-keys?limit=4&before=${cursor}`, { key: team.key });
    t.is(res.status, 200);
    back.push(res);
    if (!res.body.has_more) break;
    cursor = ids(res)[0];
    t.true(back.length < 10);
  }
  t.deepEqual(
    back.map((r) => ids(r)),
    [team.ids.slice(4, 8), team.ids.slice(0, 4)],
  );
  t.deepEqual(
    back.map((r) => r.body.has_more),
    [true, false],
  );
  t.deepEqual(
    [...back]
      .reverse()
      .flatMap(ids)
      .concat(ids(forward.at(-1)!)),
    team.ids,
  );

  // The ends: nothing before the newest, nothing after the oldest.
  const beforeNewest = await p.request('GET', `/api-keys?before=${team.ids[0]}`, { key: team.key });
  t.deepEqual(beforeNewest.body, { object: 'list', has_more: false, data: [] });
  const afterOldest = await p.request('GET', `/api-keys?after=${team.ids.at(-1)}`, { key: team.key });
  t.deepEqual(afterOldest.body, { object: 'list', has_more: false, data: [] });
  // A page that ends exactly at the newest item says there is nothing above it.
  const top = await p.request('GET', `/api-keys?limit=3&before=${team.ids[3]}`, { key: team.key });
  t.deepEqual(ids(top), team.ids.slice(0, 3));
  t.false(top.body.has_more);
  const belowTop = await p.request('GET', `/api-keys?limit=2&before=${team.ids[3]}`, { key: team.key });
  t.deepEqual(ids(belowTop), team.ids.slice(1, 3));
  t.true(belowTop.body.has_more);
});

test('a cursor from another team shows nothing of that team', async (t) => {
  const mine = await teamWithKeys(2);
  const theirs = await teamWithKeys(2);
  for (const q of [`after=${theirs.ids.at(-1)}`, `before=${theirs.ids[0]}`, `after=${newId()}`]) {
    const res = await p.request('GET', `/api-keys?${q}`, { key: mine.key });
    t.is(res.status, 200);
    for (const id of ids(res)) t.true(mine.ids.includes(id));
    t.false(res.text.includes(theirs.teamId));
  }
});

test('GET /logs pages its rows the same way', async (t) => {
  const team = await p.createTeam();
  // 7 requests, each logged; the listing requests below add rows only above the ones being walked.
  for (let i = 0; i < 7; i++) await p.request('GET', `/api-keys?limit=${i + 1}`, { key: team.key });
  const expected = (await p.db('request_logs').where({ team_id: team.id }).orderBy('id', 'desc').select('id')).map(
    (r) => r.id,
  );
  t.is(expected.length, 7);
  const seen: string[] = [];
  let cursor = '';
  const pages: boolean[] = [];
  const first = await p.request('GET', '/logs?limit=3', { key: team.key });
  // The first page was read before its own request was logged: it is the three newest.
  t.deepEqual(ids(first), expected.slice(0, 3));
  seen.push(...ids(first));
  pages.push(first.body.has_more);
  cursor = ids(first).at(-1)!;
  while (pages.at(-1)) {
    const res = await p.request('GET', `/logs?limit=3&after=${cursor}`, { key: team.key });
    seen.push(...ids(res));
    pages.push(res.body.has_more);
    cursor = ids(res).at(-1)!;
  }
  t.deepEqual(seen, expected);
  t.deepEqual(pages, [true, true, false]);
  t.deepEqual(
    (await p.request('GET', '/logs?limit=3&after=' + expected[2], { key: team.key })).body.data.map(
      (l: { endpoint: string }) => l.endpoint,
    ),
    ['/api-keys', '/api-keys', '/api-keys'],
  );
});
