// Suppressions' input checks and batch routes: malformed addresses, batch sizes, and batch remove.
import { randomUUID } from 'node:crypto';
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { suppress, teamEvents } from './helpers/suppressions.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

test('malformed addresses are refused with 422 naming the field or the item', async (t) => {
  const team = await p.createTeam();
  for (const email of [
    '',
    'ab',
    'no-at.example.com',
    'two@@example.com',
    'a@b@example.com',
    '@example.com',
    'user@localhost',
    'user@example..com',
    'user@.example.com',
    'us er@example.com',
    'user@exa\tmple.com',
    'user\u0000@example.com',
    `${'a'.repeat(310)}@example.com`,
    7,
  ]) {
    const res = await p.request('POST', '/suppressions', { key: team.key, body: { email } });
    t.is(res.status, 422, JSON.stringify(email));
    t.is(res.body.name, 'validation_error', JSON.stringify(email));
    t.deepEqual(
      res.body.errors.map((e: { path: string }) => e.path),
      ['email'],
      JSON.stringify(email),
    );
  }
  const missing = await p.request('POST', '/suppressions', { key: team.key, body: {} });
  t.is(missing.status, 422);
  t.is(missing.body.name, 'missing_required_field');

  const emails = ['a@example.com', 'b@example.com', 'c@example.com', 'not an address', 'e@example.com'];
  const batch = await p.request('POST', '/suppressions/batch/add', { key: team.key, body: { emails } });
  t.is(batch.status, 422);
  t.deepEqual(
    batch.body.errors.map((e: { path: string }) => e.path),
    ['emails.3'],
  );
  const remove = await p.request('POST', '/suppressions/batch/remove', {
    key: team.key,
    body: { emails, ids: [randomUUID(), 'x'] },
  });
  t.is(remove.status, 422);
  t.deepEqual(remove.body.errors.map((e: { path: string }) => e.path).sort(), ['emails.3', 'ids.1']);
  // Nothing of a refused batch lands.
  t.is((await p.db('suppressions').where({ team_id: team.id })).length, 0);
  t.is((await teamEvents(p, team, 'suppression.added')).length, 0);
});

test('batch sizes: 0 and 101 items are refused with 422, 100 are accepted', async (t) => {
  const team = await p.createTeam();
  const addresses = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}-${i}@example.com`);
  for (const body of [{ emails: [] }, { emails: addresses(101, 'over') }]) {
    const res = await p.request('POST', '/suppressions/batch/add', { key: team.key, body });
    t.is(res.status, 422);
    t.is(res.body.name, 'validation_error');
    t.is(res.body.errors[0].path, 'emails');
  }
  for (const body of [
    {},
    { emails: [] },
    { ids: [] },
    { emails: addresses(101, 'over') },
    { ids: Array.from({ length: 101 }, () => randomUUID()) },
  ]) {
    const res = await p.request('POST', '/suppressions/batch/remove', { key: team.key, body });
    t.is(res.status, 422, JSON.stringify(body).slice(0, 40));
    t.true(['emails', 'ids'].includes(res.body.errors[0].path));
  }

  const hundred = addresses(100, 'ok');
  const added = await p.request('POST', '/suppressions/batch/add', { key: team.key, body: { emails: hundred } });
  t.is(added.status, 201);
  t.is(added.body.data.length, 100);
  t.is(new Set(added.body.data.map((d: { id: string }) => d.id)).size, 100);
  t.true(added.body.data.every((d: { object: string }) => d.object === 'suppression'));
  t.is((await teamEvents(p, team, 'suppression.added')).length, 100);

  // The entries answer in the order asked: the 42nd reads as the 42nd address.
  t.is((await p.request('GET', `/suppressions/${added.body.data[42].id}`, { key: team.key })).body.email, hundred[42]);

  const removed = await p.request('POST', '/suppressions/batch/remove', {
    key: team.key,
    body: { emails: hundred.slice(0, 50), ids: added.body.data.slice(50).map((d: { id: string }) => d.id) },
  });
  t.is(removed.status, 200);
  t.is(removed.body.data.length, 100);
  t.true(removed.body.data.every((d: { deleted: boolean }) => d.deleted));
  t.is((await p.db('suppressions').where({ team_id: team.id })).length, 0);
});

test('batch remove: one entry per item, addresses then ids, in order; unknown items answer deleted:false', async (t) => {
  const team = await p.createTeam();
  const [a, b, c] = [
    await suppress(p, team, 'a@example.com'),
    await suppress(p, team, 'b@example.com'),
    await suppress(p, team, 'c@example.com'),
  ];
  const unknownId = randomUUID();
  const res = await p.request('POST', '/suppressions/batch/remove', {
    key: team.key,
    body: { emails: ['B@Example.com', 'nobody@example.com', 'b@example.com'], ids: [c, unknownId, a] },
  });
  t.is(res.status, 200);
  t.deepEqual(res.body, {
    data: [
      { object: 'suppression', id: b, deleted: true },
      { object: 'suppression', deleted: false },
      // Already removed by the first item.
      { object: 'suppression', deleted: false },
      { object: 'suppression', id: c, deleted: true },
      { object: 'suppression', id: unknownId, deleted: false },
      { object: 'suppression', id: a, deleted: true },
    ],
  });
  t.deepEqual(
    (await teamEvents(p, team, 'suppression.removed')).map((e) => e.data.id),
    [b, c, a],
  );

  // Only ids, or only addresses, is enough; a batch that removes nothing records nothing.
  const none = await p.request('POST', '/suppressions/batch/remove', { key: team.key, body: { ids: [a] } });
  t.deepEqual(none.body, { data: [{ object: 'suppression', id: a, deleted: false }] });
  t.deepEqual(
    (await p.request('POST', '/suppressions/batch/remove', { key: team.key, body: { emails: ['a@example.com'] } }))
      .body,
    { data: [{ object: 'suppression', deleted: false }] },
  );
  t.is((await teamEvents(p, team, 'suppression.removed')).length, 3);
});
