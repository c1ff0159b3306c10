// The two operations the audience pages added: GET /contacts `search` (a case-insensitive substring of the
// address or a name; `%` and `_` literal; within a segment with `segment_id`; another team's contacts never found) and
// POST /segments/count (an unsaved filter's matches now, refused at the filter's path; a viewer's session may ask).
import test from 'ava';
import { CookieClient } from './helpers/accounts.ts';
import { createContact } from './helpers/contacts.ts';
import { PASSWORD, startAudienceWorld, type AudienceWorld } from './helpers/audience-dashboard.ts';
import type { TestTeam } from './helpers/platform.ts';
import { createKey } from '../shared/api-keys/keys.ts';

let world: AudienceWorld;
let team: TestTeam;
let other: TestTeam;
test.before(async (t) => {
  // Building the dashboard and starting the platform (and its worker) take long on a loaded machine.
  t.timeout(300_000);
  world = await startAudienceWorld(false);
  team = { id: world.teamId, key: (await createKey(world.p.db, world.teamId, { name: 'k' })).token };
  other = await world.p.createTeam('Other');
  for (const [email, first_name, last_name] of [
    ['ann@people.test', 'Ann', 'Lee'],
    ['bob_50%@people.test', 'Bob', 'Annable'],
    ['cy@people.test', 'Cy', null],
  ])
    await createContact(world.p, team, { email, first_name, last_name });
  await createContact(world.p, other, { email: 'ann@other.test', first_name: 'Ann' });
});
test.after.always(async () => {
  await world?.close();
});

const search = async (q: string, t: TestTeam = team) => {
  const res = await world.p.request('GET', `/contacts?search=${encodeURIComponent(q)}`, { key: t.key });
  return { res, emails: (res.body?.data ?? []).map((c: { email: string }) => c.email) as string[] };
};

test('search: address or name, any case, newest first; metacharacters literal; only the team', async (t) => {
  t.deepEqual((await search('ANN')).emails, ['bob_50%@people.test', 'ann@people.test'], 'address, first or last');
  t.deepEqual((await search('50%')).emails, ['bob_50%@people.test']);
  t.deepEqual((await search('%')).emails, ['bob_50%@people.test'], '% is a character');
  t.deepEqual((await search('_')).emails, ['bob_50%@people.test'], '_ is a character');
  t.deepEqual((await search('nobody')).emails, []);
  t.deepEqual((await search('ann', other)).emails, ['ann@other.test'], "another team's search sees its own only");
  const paged = await world.p.request('GET', '/contacts?search=people&limit=1', { key: team.key });
  t.is(paged.body.data.length, 1);
  t.true(paged.body.has_more);
  const next = await world.p.request('GET', `/contacts?search=people&limit=2&after=${paged.body.data[0].id}`, {
    key: team.key,
  });
  t.deepEqual(
    next.body.data.map((c: { email: string }) => c.email),
    ['bob_50%@people.test', 'ann@people.test'],
  );
});

test('search: refused when empty or too long', async (t) => {
  for (const q of ['', 'x'.repeat(201)]) {
    const { res } = await search(q);
    t.is(res.status, 422, q);
    t.is(res.body.errors[0].path, 'search');
  }
});

// Serial: AVA runs it before the concurrent tests, so the segments it makes are there before the count test looks.
test.serial('search within a segment: its hand members and filter matches only, paged', async (t) => {
  const inSegment = async (id: string, q: string, extra = '') => {
    const res = await world.p.request('GET', `/contacts?segment_id=${id}&search=${encodeURIComponent(q)}${extra}`, {
      key: team.key,
    });
    t.is(res.status, 200, res.text);
    return { res, emails: res.body.data.map((c: { email: string }) => c.email) as string[] };
  };
  const add = async (segment: string, email: string) => {
    const r = await world.p.request('POST', `/contacts/${encodeURIComponent(email)}/segments/${segment}`, {
      key: team.key,
    });
    t.true(r.status < 300, r.text);
  };
  const hand = await world.p.request('POST', '/segments', { key: team.key, body: { name: 'By hand' } });
  await add(hand.body.id, 'ann@people.test');
  await add(hand.body.id, 'bob_50%@people.test');
  t.deepEqual((await inSegment(hand.body.id, 'ANN')).emails, ['bob_50%@people.test', 'ann@people.test']);
  t.deepEqual((await inSegment(hand.body.id, 'cy')).emails, [], 'cy is no member');
  t.deepEqual((await inSegment(hand.body.id, '%')).emails, ['bob_50%@people.test'], '% is a character');

  const filtered = await world.p.request('POST', '/segments', {
    key: team.key,
    body: { name: 'Cy and Ann', filter: { field: 'first_name', operator: 'equals', value: 'Cy' } },
  });
  t.is(filtered.status, 201, filtered.text);
  await add(filtered.body.id, 'ann@people.test');
  t.deepEqual((await inSegment(filtered.body.id, 'people')).emails, ['cy@people.test', 'ann@people.test']);
  t.deepEqual((await inSegment(filtered.body.id, 'ann')).emails, ['ann@people.test'], 'bob (Annable) is no member');
  const first = await inSegment(filtered.body.id, 'people', '&limit=1');
  t.deepEqual(first.emails, ['cy@people.test']);
  t.true(first.res.body.has_more);
  const next = await inSegment(filtered.body.id, 'people', `&limit=1&after=${first.res.body.data[0].id}`);
  t.deepEqual(next.emails, ['ann@people.test']);
  t.false(next.res.body.has_more);
  const foreign = await world.p.request('GET', `/contacts?segment_id=${filtered.body.id}&search=ann`, {
    key: other.key,
  });
  t.is(foreign.status, 422, "another team's segment is not found");
});

test('count: an unsaved filter counted; refused at its path; nothing saved', async (t) => {
  const count = (filter: unknown, t2: TestTeam = team) =>
    world.p.request('POST', '/segments/count', { key: t2.key, body: { filter } });
  const segments = () => world.p.db('segments').where({ team_id: team.id }).count({ n: '*' }).first();
  const before = Number((await segments())!.n);
  const ok = await count({
    any: [
      { field: 'first_name', operator: 'equals', value: 'Ann' },
      { field: 'email', operator: 'starts_with', value: 'cy@' },
    ],
  });
  t.is(ok.status, 200, ok.text);
  t.deepEqual(ok.body, { object: 'segment_count', count: 2 });
  t.deepEqual((await count({ not: { field: 'last_name', operator: 'is_set' } })).body.count, 1);
  t.is((await count({ field: 'first_name', operator: 'equals', value: 'Ann' }, other)).body.count, 1, 'its team only');
  const unknown = await count({
    all: [
      { field: 'first_name', operator: 'is_set' },
      { field: 'property', key: 'nope', operator: 'is_set' },
    ],
  });
  t.is(unknown.status, 422);
  t.is(unknown.body.errors[0].path, 'filter.all.1.key');
  const shape = await count({ all: [{ field: 'email', operator: 'contains', value: 5 }] });
  t.is(shape.status, 422);
  t.is(shape.body.errors[0].path, 'filter.all.0.value');
  t.is((await world.p.request('POST', '/segments/count', { key: team.key, body: {} })).status, 422);
  t.is(Number((await segments())!.n), before, 'no segment made by a count');
});

test("count: a viewer's session may count (a read), as it may not create a segment", async (t) => {
  const viewer = new CookieClient(world.p.url);
  const login = await viewer.request('POST', '/auth/login', { body: { email: world.viewer, password: PASSWORD } });
  t.is(login.status, 200, login.text);
  const filter = { field: 'email', operator: 'ends_with', value: '@people.test' };
  const counted = await viewer.request('POST', '/segments/count', { body: { filter } });
  t.is(counted.status, 200, counted.text);
  t.is(counted.body.count, 3);
  const made = await viewer.request('POST', '/segments', { body: { name: 'Mine', filter } });
  t.is(made.status, 403, made.text);
});
