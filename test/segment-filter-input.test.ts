// Bad segment filters: each refused with a 422 in the Error shape naming its place in the filter, on create and on
// update, and nothing written. Too deep, too large, too long, unknown property keys, values and operators of the
// wrong type, unknown fields and operators, bad day counts, another team's topic.
import test from 'ava';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { isError } from './helpers/http.ts';
import { created, createSegment, createTopic } from './helpers/contacts.ts';

let p: Platform;
let team: TestTeam;
let theirTopic: string;
let topic: string;
test.before(async () => {
  p = await startPlatform();
  team = await p.createTeam();
  await created(p, team, '/contact-properties', { key: 'plan', type: 'string' });
  await created(p, team, '/contact-properties', { key: 'seats', type: 'number' });
  await created(p, team, '/contact-properties', { key: 'vip', type: 'boolean' });
  topic = await createTopic(p, team, { name: 'Ours' });
  const other = await p.createTeam();
  theirTopic = await createTopic(p, other, { name: 'Theirs' });
  await created(p, other, '/contact-properties', { key: 'region', type: 'string' });
});
test.after.always(async () => {
  await p?.close();
});

const email = { field: 'email', operator: 'contains', value: '@' };
/** `inner` wrapped in `levels` groups: {all: [{all: [... inner]}]}. */
const nested = (levels: number, inner: unknown): unknown =>
  levels === 0 ? inner : { all: [nested(levels - 1, inner)] };
const one = (condition: unknown) => ({ all: [condition] });

/** [what, filter, the path the 422 names, the error name] */
const cases: [string, unknown, string, string?][] = [
  ['6 groups deep', nested(6, email), 'filter.all.0.all.0.all.0.all.0.all.0.all'],
  ['a not too deep', nested(5, { not: email }), 'filter.all.0.all.0.all.0.all.0.all.0.not'],
  ['51 conditions in one group', { all: Array(51).fill(email) }, 'filter.all.50'],
  [
    '51 conditions over two groups',
    { any: [{ all: Array(30).fill(email) }, { all: Array(21).fill(email) }] },
    'filter.any.1.all.20',
  ],
  ['an empty group', { all: [] }, 'filter.all'],
  ['a group that is not a list', { any: email }, 'filter.any'],
  ['two groups in one object', { all: [email], any: [email] }, 'filter.any'],
  ['neither group nor condition', { some: [email] }, 'filter'],
  ['a list as the filter', [email], 'filter'],
  ['a string in a group', { all: ['email contains @'] }, 'filter.all.0'],
  ['an unknown field', one({ field: 'phone', operator: 'equals', value: '1' }), 'filter.all.0.field'],
  ['an unknown operator', one({ field: 'email', operator: 'matches', value: 'x' }), 'filter.all.0.operator'],
  ['an operator of another field', one({ field: 'email', operator: 'is_set' }), 'filter.all.0.operator'],
  ['a misspelt key', one({ field: 'email', operator: 'equals', value: 'x', vlaue: 'x' }), 'filter.all.0.vlaue'],
  ['a missing value', one({ field: 'email', operator: 'equals' }), 'filter.all.0.value', 'missing_required_field'],
  ['a value where none is taken', one({ field: 'first_name', operator: 'is_set', value: 'x' }), 'filter.all.0.value'],
  ['an empty value', one({ field: 'first_name', operator: 'contains', value: '' }), 'filter.all.0.value'],
  ['an address too long', one({ field: 'email', operator: 'contains', value: 'x'.repeat(321) }), 'filter.all.0.value'],
  ['a name too long', one({ field: 'last_name', operator: 'equals', value: 'x'.repeat(257) }), 'filter.all.0.value'],
  [
    'a property value too long',
    one({ field: 'property', key: 'plan', operator: 'equals', value: 'x'.repeat(2001) }),
    'filter.all.0.value',
  ],
  [
    'an unknown property',
    one({ field: 'property', key: 'colour', operator: 'equals', value: 'red' }),
    'filter.all.0.key',
  ],
  ["another team's property", one({ field: 'property', key: 'region', operator: 'is_set' }), 'filter.all.0.key'],
  ['a key no property can have', one({ field: 'property', key: 'no-dash', operator: 'is_set' }), 'filter.all.0.key'],
  [
    'a number for a string property',
    one({ field: 'property', key: 'plan', operator: 'equals', value: 5 }),
    'filter.all.0.value',
  ],
  [
    'a string for a number property',
    one({ field: 'property', key: 'seats', operator: 'not_equals', value: '5' }),
    'filter.all.0.value',
  ],
  [
    'a string for a boolean property',
    one({ field: 'property', key: 'vip', operator: 'equals', value: 'true' }),
    'filter.all.0.value',
  ],
  [
    'a comparison of a string property',
    one({ field: 'property', key: 'plan', operator: 'greater_than', value: 5 }),
    'filter.all.0.operator',
  ],
  [
    'a text part of a number property',
    one({ field: 'property', key: 'seats', operator: 'contains', value: '5' }),
    'filter.all.0.operator',
  ],
  [
    'a string to compare with',
    one({ field: 'property', key: 'seats', operator: 'less_than', value: '5' }),
    'filter.all.0.value',
  ],
  [
    'an object as a value',
    one({ field: 'property', key: 'plan', operator: 'equals', value: { a: 1 } }),
    'filter.all.0.value',
  ],
  ['zero days', one({ field: 'opened', operator: 'within_last_days', days: 0 }), 'filter.all.0.days'],
  ['negative days', one({ field: 'clicked', operator: 'not_within_last_days', days: -3 }), 'filter.all.0.days'],
  ['a fraction of days', one({ field: 'received', operator: 'within_last_days', days: 1.5 }), 'filter.all.0.days'],
  ['days as a string', one({ field: 'received', operator: 'within_last_days', days: '30' }), 'filter.all.0.days'],
  [
    'more than ten years of days',
    one({ field: 'created_at', operator: 'within_last_days', days: 3651 }),
    'filter.all.0.days',
  ],
  ['an engagement compared', one({ field: 'opened', operator: 'equals', days: 3 }), 'filter.all.0.operator'],
  ['not a date', one({ field: 'created_at', operator: 'before', value: 'yesterday' }), 'filter.all.0.value'],
  ['unsubscribed as a string', one({ field: 'unsubscribed', operator: 'equals', value: 'yes' }), 'filter.all.0.value'],
  [
    'a topic id that is no id',
    one({ field: 'topic', topic_id: 'news', operator: 'subscribed' }),
    'filter.all.0.topic_id',
  ],
  [
    'an unknown topic',
    one({ field: 'topic', topic_id: crypto.randomUUID(), operator: 'subscribed' }),
    'filter.all.0.topic_id',
  ],
  [
    'a topic operator unknown',
    one({ field: 'topic', topic_id: crypto.randomUUID(), operator: 'opted_in' }),
    'filter.all.0.operator',
  ],
];

test('POST /segments: each bad filter is a 422 naming its place; no segment is made', async (t) => {
  for (const [what, filter, path, name] of cases) {
    const res = await p.request('POST', '/segments', { key: team.key, body: { name: what, filter } });
    isError(t, res, 422, name ?? 'validation_error');
    // The first error names the place (a condition may have more than one problem: each is listed).
    t.is(res.body.errors?.[0]?.path, path, `${what}: ${res.text}`);
    t.true(res.body.message.includes(`\`${path}\``), `${what}: the message names ${path}: ${res.body.message}`);
    t.notRegex(res.text, /select|contacts c|jsonb|stack/i, what);
  }
  t.deepEqual((await p.request('GET', '/segments', { key: team.key })).body.data, []);
});

test("another team's topic in a filter: 422 naming it, on create and on update; the segment stays as it was", async (t) => {
  const theirs = { field: 'topic', topic_id: theirTopic, operator: 'subscribed' };
  const res = await p.request('POST', '/segments', { key: team.key, body: { name: 'x', filter: { any: [theirs] } } });
  isError(t, res, 422, 'validation_error');
  t.deepEqual(res.body.errors, [
    { path: 'filter.any.0.topic_id', message: `no topic of this team has the id ${theirTopic}` },
  ]);
  const ours = { field: 'topic', topic_id: topic, operator: 'not_subscribed' };
  const segment = await p.request('POST', '/segments', { key: team.key, body: { name: 'Ours', filter: ours } });
  t.is(segment.status, 201, segment.text);
  const id = segment.body.id;
  const patched = await p.request('PATCH', `/segments/${id}`, {
    key: team.key,
    body: { filter: { all: [ours, { not: theirs }] } },
  });
  isError(t, patched, 422, 'validation_error');
  t.deepEqual(
    patched.body.errors.map((e: { path: string }) => e.path),
    ['filter.all.1.not.topic_id'],
  );
  t.like((await p.request('GET', `/segments/${id}`, { key: team.key })).body, { name: 'Ours', filter: ours });
  await p.request('DELETE', `/segments/${id}`, { key: team.key });
});

test('PATCH /segments/{id}: the same checks on a new filter; the limits themselves are accepted', async (t) => {
  const id = await createSegment(p, team, 'Limits');
  for (const [what, filter, path, name] of cases.slice(0, 12)) {
    const res = await p.request('PATCH', `/segments/${id}`, { key: team.key, body: { filter } });
    isError(t, res, 422, name ?? 'validation_error');
    t.deepEqual(
      res.body.errors?.map((e: { path: string }) => e.path),
      [path],
      `${what}: ${res.text}`,
    );
  }
  t.is((await p.request('GET', `/segments/${id}`, { key: team.key })).body.filter, null);
  // 5 groups deep, 50 conditions, the longest values, the day limits: all taken.
  const limits = {
    any: [
      nested(4, email),
      { all: Array(46).fill({ field: 'property', key: 'plan', operator: 'equals', value: 'x'.repeat(2000) }) },
      { field: 'email', operator: 'equals', value: 'x'.repeat(320) },
      { field: 'opened', operator: 'within_last_days', days: 3650 },
      { field: 'created_at', operator: 'within_last_days', days: 1 },
    ],
  };
  const ok = await p.request('PATCH', `/segments/${id}`, { key: team.key, body: { filter: limits } });
  t.is(ok.status, 200, ok.text);
  const got = await p.request('GET', `/segments/${id}`, { key: team.key });
  t.deepEqual(got.body.filter, limits);
  t.is(got.body.count, 0);
  await p.request('DELETE', `/segments/${id}`, { key: team.key });
});
