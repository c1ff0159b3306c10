// Suppressions through the api, one address at a time: create, the stronger origin, list, delete, other teams,
// and isSuppressed. Malformed input and the batch routes: test/suppressions-batch.test.ts.
import { randomUUID } from 'node:crypto';
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { suppress, teamEvents } from './helpers/suppressions.ts';
import { addSuppression, isSuppressed, normalizeAddress } from '../shared/suppressions/suppressions.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

test('create answers 201 {object, id}; the suppression reads by id and by address; suppression.added is recorded', async (t) => {
  const team = await p.createTeam();
  const created = await p.request('POST', '/suppressions', {
    key: team.key,
    body: { email: '  Jane.Doe+news@Example.COM ' },
  });
  t.is(created.status, 201);
  t.deepEqual(Object.keys(created.body).sort(), ['id', 'object']);
  t.is(created.body.object, 'suppression');
  const id = created.body.id;

  const byId = await p.request('GET', `/suppressions/${id}`, { key: team.key });
  t.is(byId.status, 200);
  t.deepEqual(Object.keys(byId.body).sort(), ['created_at', 'email', 'id', 'object', 'origin', 'source_id']);
  t.like(byId.body, {
    object: 'suppression',
    id,
    email: 'jane.doe+news@example.com',
    origin: 'manual',
    source_id: null,
  });
  t.regex(byId.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

  // By address: percent-encoded, a raw `+` (a path keeps it literal), any case, and under /api/v1.
  for (const path of [
    `/suppressions/${encodeURIComponent('jane.doe+news@example.com')}`,
    '/suppressions/jane.doe+news@example.com',
    `/suppressions/${encodeURIComponent('JANE.Doe+News@EXAMPLE.com')}`,
    `/api/v1/suppressions/${encodeURIComponent('Jane.Doe+news@example.com')}`,
  ]) {
    const res = await p.request('GET', path, { key: team.key });
    t.is(res.status, 200, path);
    t.deepEqual(res.body, byId.body, path);
  }

  const added = await teamEvents(p, team, 'suppression.added');
  t.is(added.length, 1);
  t.deepEqual(added[0].data, {
    id,
    email: 'jane.doe+news@example.com',
    origin: 'manual',
    source_id: null,
    created_at: byId.body.created_at,
  });
});

test('adding an address that is already suppressed keeps its entry: same id, one row, no second event', async (t) => {
  const team = await p.createTeam();
  const id = await suppress(p, team, 'again@example.com');
  t.is(await suppress(p, team, 'AGAIN@example.com'), id);
  t.is(await suppress(p, team, ' again@example.com'), id);

  const batch = await p.request('POST', '/suppressions/batch/add', {
    key: team.key,
    body: { emails: ['new@example.com', 'Again@Example.com', 'NEW@example.com'] },
  });
  t.is(batch.status, 201);
  t.is(batch.body.data.length, 3);
  t.deepEqual(batch.body.data[1], { object: 'suppression', id });
  t.deepEqual(batch.body.data[0], batch.body.data[2]);
  t.not(batch.body.data[0].id, id);

  t.is((await p.db('suppressions').where({ team_id: team.id })).length, 2);
  t.is((await teamEvents(p, team, 'suppression.added')).length, 2);

  // At the same moment too: one row, one event, every caller answered with its id.
  const raced = await Promise.all(
    Array.from({ length: 6 }, (_, i) => suppress(p, team, i % 2 ? 'RACE@example.com' : 'race@example.com')),
  );
  t.is(new Set(raced).size, 1);
  t.is((await teamEvents(p, team, 'suppression.added')).length, 3);
});

test('a stronger origin replaces a weaker one (manual < bounce < unsubscribe < complaint); a weaker or equal one changes nothing', async (t) => {
  const team = await p.createTeam();
  const id = await suppress(p, team, 'origin@example.com');
  const sourceId = randomUUID();

  const bounced = await addSuppression(p.db, team.id, {
    email: 'Origin@example.com',
    origin: 'bounce',
    source_id: sourceId,
  });
  t.true(bounced.changed);
  t.like(bounced.row, { id, origin: 'bounce', source_id: sourceId });
  t.like((await p.request('GET', `/suppressions/${id}`, { key: team.key })).body, {
    id,
    origin: 'bounce',
    source_id: sourceId,
  });

  for (const origin of ['manual', 'bounce'] as const) {
    const kept = await addSuppression(p.db, team.id, { email: 'origin@example.com', origin, source_id: null });
    t.false(kept.changed, origin);
    t.like(kept.row, { id, origin: 'bounce', source_id: sourceId });
  }
  t.like((await addSuppression(p.db, team.id, { email: 'origin@example.com', origin: 'complaint' })).row, {
    id,
    origin: 'complaint',
    source_id: null,
  });
  t.false((await addSuppression(p.db, team.id, { email: 'origin@example.com', origin: 'unsubscribe' })).changed);

  const added = await teamEvents(p, team, 'suppression.added');
  t.deepEqual(
    added.map((e) => e.data.origin),
    ['manual', 'bounce', 'complaint'],
  );
  t.true(added.every((e) => e.data.id === id));
  // The created_at of the entry is when the address was first suppressed.
  t.is(added[2].data.created_at, added[0].data.created_at);
});

test('list: the list item shape, newest first, filtered by origin, paged with limit/after/before', async (t) => {
  const team = await p.createTeam();
  const manual = [];
  for (let i = 0; i < 5; i++) manual.push(await suppress(p, team, `list-${i}@example.com`));
  const bounce = (
    await addSuppression(p.db, team.id, { email: 'bounced@example.com', origin: 'bounce', source_id: randomUUID() })
  ).row.id;
  const complaint = (await addSuppression(p.db, team.id, { email: 'complained@example.com', origin: 'complaint' })).row
    .id;

  const all = await p.request('GET', '/suppressions', { key: team.key });
  t.is(all.status, 200);
  t.like(all.body, { object: 'list', has_more: false });
  t.deepEqual(
    all.body.data.map((s: { id: string }) => s.id),
    [complaint, bounce, ...[...manual].reverse()],
  );
  t.deepEqual(Object.keys(all.body.data[0]).sort(), ['created_at', 'email', 'id', 'origin', 'source_id']);

  const bounces = await p.request('GET', '/suppressions?origin=bounce', { key: team.key });
  t.is(bounces.status, 200);
  t.deepEqual(
    bounces.body.data.map((s: { id: string }) => s.id),
    [bounce],
  );
  t.is(bounces.body.data[0].email, 'bounced@example.com');
  t.is((await p.request('GET', '/suppressions?origin=unsubscribe', { key: team.key })).body.data.length, 0);

  const first = await p.request('GET', '/suppressions?origin=manual&limit=2', { key: team.key });
  t.true(first.body.has_more);
  t.deepEqual(
    first.body.data.map((s: { id: string }) => s.id),
    [manual[4], manual[3]],
  );
  const second = await p.request('GET', `/suppressions?origin=manual&limit=2&after=${manual[3]}`, { key: team.key });
  t.deepEqual(
    second.body.data.map((s: { id: string }) => s.id),
    [manual[2], manual[1]],
  );
  t.true(second.body.has_more);
  const back = await p.request('GET', `/suppressions?origin=manual&limit=2&before=${manual[2]}`, { key: team.key });
  t.deepEqual(
    back.body.data.map((s: { id: string }) => s.id),
    [manual[4], manual[3]],
  );

  const badOrigin = await p.request('GET', '/suppressions?origin=spam', { key: team.key });
  t.is(badOrigin.status, 422);
  t.is(badOrigin.body.errors[0].path, 'origin');
  t.is((await p.request('GET', '/suppressions?limit=101', { key: team.key })).status, 422);
});

test('delete by id or by address answers {object, id, deleted:true} and records suppression.removed once', async (t) => {
  const team = await p.createTeam();
  const byId = await suppress(p, team, 'del-1@example.com');
  const byEmail = await suppress(p, team, 'Del+2@example.com');

  const one = await p.request('DELETE', `/suppressions/${byId}`, { key: team.key });
  t.is(one.status, 200);
  t.deepEqual(one.body, { object: 'suppression', id: byId, deleted: true });
  const two = await p.request('DELETE', `/suppressions/${encodeURIComponent('DEL+2@Example.com')}`, { key: team.key });
  t.deepEqual(two.body, { object: 'suppression', id: byEmail, deleted: true });

  for (const path of [`/suppressions/${byId}`, `/suppressions/${encodeURIComponent('del+2@example.com')}`]) {
    const again = await p.request('DELETE', path, { key: team.key });
    t.is(again.status, 404, path);
    t.is(again.body.name, 'not_found');
    t.is((await p.request('GET', path, { key: team.key })).status, 404, path);
  }
  const removed = await teamEvents(p, team, 'suppression.removed');
  t.deepEqual(
    removed.map((e) => e.data.id),
    [byId, byEmail],
  );
  t.like(removed[1].data, { email: 'del+2@example.com', origin: 'manual', source_id: null });
  // Lifted means lifted: the address can be suppressed anew, under a new id.
  t.not(await suppress(p, team, 'del-1@example.com'), byId);
});

test('an id or address of nothing, or something that is neither, answers 404 not_found', async (t) => {
  const team = await p.createTeam();
  for (const ref of [randomUUID(), 'nobody@example.com', 'not-an-address', 'a b@example.com', 'batch']) {
    for (const method of ['GET', 'DELETE']) {
      const res = await p.request(method, `/suppressions/${encodeURIComponent(ref)}`, { key: team.key });
      t.is(res.status, 404, `${method} ${ref}`);
      t.is(res.body.name, 'not_found', `${method} ${ref}`);
      t.is(res.body.message, 'Suppression not found.');
    }
  }
});

test('another team never sees a suppression: 404 by id and by address, not listed, not removed', async (t) => {
  const owner = await p.createTeam('Owner');
  const other = await p.createTeam('Other');
  const id = await suppress(p, owner, 'private@example.com');

  for (const path of [`/suppressions/${id}`, '/suppressions/private%40example.com']) {
    for (const method of ['GET', 'DELETE']) {
      const res = await p.request(method, path, { key: other.key });
      t.is(res.status, 404, `${method} ${path}`);
      t.is(res.body.name, 'not_found');
    }
  }
  t.deepEqual((await p.request('GET', '/suppressions', { key: other.key })).body.data, []);
  const batch = await p.request('POST', '/suppressions/batch/remove', {
    key: other.key,
    body: { emails: ['private@example.com'], ids: [id] },
  });
  t.deepEqual(
    batch.body.data.map((d: { deleted: boolean }) => d.deleted),
    [false, false],
  );
  t.is((await teamEvents(p, other, 'suppression.removed')).length, 0);
  t.is((await p.request('GET', `/suppressions/${id}`, { key: owner.key })).status, 200);

  // The same address is the other team's own, separate entry.
  const theirs = await suppress(p, other, 'Private@example.com');
  t.not(theirs, id);
  t.is((await p.request('GET', '/suppressions', { key: owner.key })).body.data.length, 1);
  t.deepEqual((await isSuppressed(p.db, other.id, ['private@example.com'])).get('private@example.com')?.id, theirs);
});

test('isSuppressed answers the suppressed ones of a list in one call, keyed by the addresses as passed', async (t) => {
  const team = await p.createTeam();
  await suppress(p, team, 'gone@example.com');
  await addSuppression(p.db, team.id, { email: 'complained@example.com', origin: 'complaint' });
  const found = await isSuppressed(p.db, team.id, [
    'Gone@Example.com',
    'fine@example.com',
    ' complained@example.com',
    'gone@example.com',
  ]);
  t.deepEqual([...found.keys()], ['Gone@Example.com', ' complained@example.com', 'gone@example.com']);
  t.is(found.get('Gone@Example.com')?.origin, 'manual');
  t.is(found.get(' complained@example.com')?.origin, 'complaint');
  t.is((await isSuppressed(p.db, team.id, [])).size, 0);

  t.is(normalizeAddress(' A.B+c@Example.COM '), 'a.b+c@example.com');
  t.is(normalizeAddress('no-at'), null);
  await t.throwsAsync(addSuppression(p.db, team.id, { email: 'bad address', origin: 'bounce' }), { message: /email/ });
});
