// Segment filters through the real api: each field and operator of the language, matched in PostgreSQL, as a
// segment's count and its contacts list answer them.
import test from 'ava';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { createContact, createTopic, created } from './helpers/contacts.ts';
import { matching } from './helpers/segment-filters.ts';
import { setSubscription } from '../shared/topics/subscriptions.ts';
import { noteActivity } from '../shared/contacts/activity.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

/** Each filter with the addresses it must match (sorted as `matching` answers them). */
async function expectMatches(
  t: { deepEqual: (a: unknown, b: unknown, m?: string) => void },
  team: TestTeam,
  cases: [unknown, string[]][],
) {
  for (const [filter, expected] of cases)
    t.deepEqual(await matching(p, team, filter), [...expected].sort(), JSON.stringify(filter));
}

test('email and names: equals (an address without regard to case, a name exactly), contains, starts and ends with, set or not', async (t) => {
  const team = await p.createTeam();
  await createContact(p, team, { email: 'Ada@Example.com', first_name: 'Ada', last_name: 'Lovelace' });
  await createContact(p, team, { email: 'bob@other.test', first_name: 'Bob' });
  await createContact(p, team, { email: 'cy@example.com' });
  const [ada, bob, cy] = ['Ada@example.com', 'bob@other.test', 'cy@example.com'];
  const c = (field: string, operator: string, value?: string) => ({ field, operator, ...(value ? { value } : {}) });
  await expectMatches(t, team, [
    [c('email', 'equals', 'ADA@example.com'), [ada]],
    [c('email', 'not_equals', 'ada@EXAMPLE.com'), [bob, cy]],
    [c('email', 'contains', 'EXAMPLE'), [ada, cy]],
    [c('email', 'starts_with', 'BO'), [bob]],
    [c('email', 'ends_with', '@example.COM'), [ada, cy]],
    [c('first_name', 'equals', 'Ada'), [ada]],
    [c('first_name', 'equals', 'ada'), []],
    [c('first_name', 'not_equals', 'Ada'), [bob, cy]],
    [c('first_name', 'contains', 'O'), [bob]],
    [c('last_name', 'starts_with', 'love'), [ada]],
    [c('last_name', 'ends_with', 'LACE'), [ada]],
    [c('last_name', 'is_set'), [ada]],
    [c('last_name', 'is_not_set'), [bob, cy]],
    [c('first_name', 'is_set'), [ada, bob]],
    // LIKE's wildcards are plain characters here.
    [c('email', 'contains', '%'), []],
    [c('email', 'contains', '_'), []],
  ]);
});

test('properties, typed by the team: equals, not_equals, text parts, number comparisons, set or not', async (t) => {
  const team = await p.createTeam();
  for (const [key, type] of [
    ['plan', 'string'],
    ['seats', 'number'],
    ['vip', 'boolean'],
  ])
    await created(p, team, '/contact-properties', { key, type, fallback_value: null });
  await createContact(p, team, { email: 'a@x.test', properties: { plan: 'Trial-EU', seats: 5, vip: true } });
  await createContact(p, team, { email: 'b@x.test', properties: { plan: 'pro', seats: 50.5, vip: false } });
  await createContact(p, team, { email: 'c@x.test', properties: { seats: -1 } });
  await createContact(p, team, { email: 'd@x.test' });
  const [a, b, c, d] = ['a@x.test', 'b@x.test', 'c@x.test', 'd@x.test'];
  const prop = (key: string, operator: string, value?: unknown) => ({
    field: 'property',
    key,
    operator,
    ...(value === undefined ? {} : { value }),
  });
  await expectMatches(t, team, [
    [prop('plan', 'equals', 'pro'), [b]],
    [prop('plan', 'equals', 'PRO'), []],
    [prop('plan', 'not_equals', 'pro'), [a, c, d]],
    [prop('plan', 'contains', 'ial-e'), [a]],
    [prop('plan', 'starts_with', 'tri'), [a]],
    [prop('plan', 'ends_with', 'O'), [b]],
    [prop('plan', 'is_set'), [a, b]],
    [prop('plan', 'is_not_set'), [c, d]],
    [prop('seats', 'equals', 5), [a]],
    [prop('seats', 'equals', 50.5), [b]],
    [prop('seats', 'not_equals', 5), [b, c, d]],
    [prop('seats', 'greater_than', 5), [b]],
    [prop('seats', 'greater_than_or_equal', 5), [a, b]],
    [prop('seats', 'less_than', 5), [c]],
    [prop('seats', 'less_than_or_equal', 50.5), [a, b, c]],
    [prop('seats', 'is_not_set'), [d]],
    [prop('vip', 'equals', true), [a]],
    [prop('vip', 'equals', false), [b]],
    [prop('vip', 'not_equals', true), [b, c, d]],
  ]);
});

test('topics: the address’s choice, else the topic’s default; another team’s choices never count', async (t) => {
  const team = await p.createTeam();
  const news = await createTopic(p, team, { name: 'News', default_subscription: 'opt_in' });
  const offers = await createTopic(p, team, { name: 'Offers', default_subscription: 'opt_out' });
  await createContact(p, team, { email: 'In@Example.com', topics: [{ id: offers, subscription: 'opt_in' }] });
  await createContact(p, team, { email: 'out@example.com', topics: [{ id: news, subscription: 'opt_out' }] });
  await createContact(p, team, { email: 'none@example.com' });
  // A choice recorded for the address elsewhere (the preference page writes it lower case) counts too.
  await setSubscription(p.db, { teamId: team.id, topicId: offers, email: 'OUT@example.com', subscription: 'opt_in' });
  const other = await p.createTeam();
  const theirs = await createTopic(p, other, { name: 'Theirs', default_subscription: 'opt_out' });
  await setSubscription(p.db, { teamId: other.id, topicId: theirs, email: 'none@example.com', subscription: 'opt_in' });
  const topic = (id: string, operator: string) => ({ field: 'topic', topic_id: id, operator });
  await expectMatches(t, team, [
    [topic(news, 'subscribed'), ['In@example.com', 'none@example.com']],
    [topic(news, 'not_subscribed'), ['out@example.com']],
    [topic(offers, 'subscribed'), ['In@example.com', 'out@example.com']],
    [topic(offers, 'not_subscribed'), ['none@example.com']],
  ]);
});

test('created_at before, after and within the last N days; unsubscribed', async (t) => {
  const team = await p.createTeam();
  const old = await createContact(p, team, { email: 'old@x.test', unsubscribed: true });
  const month = await createContact(p, team, { email: 'month@x.test' });
  await createContact(p, team, { email: 'new@x.test' });
  const day = 24 * 3600 * 1000;
  await p
    .db('contacts')
    .where({ id: old })
    .update({ created_at: new Date(Date.now() - 400 * day) });
  await p
    .db('contacts')
    .where({ id: month })
    .update({ created_at: new Date(Date.now() - 20 * day) });
  const at = (days: number) => new Date(Date.now() - days * day).toISOString();
  await expectMatches(t, team, [
    [{ field: 'created_at', operator: 'before', value: at(30) }, ['old@x.test']],
    [{ field: 'created_at', operator: 'after', value: at(30) }, ['month@x.test', 'new@x.test']],
    [
      { field: 'created_at', operator: 'after', value: '2000-01-01T00:00:00+02:00' },
      ['month@x.test', 'new@x.test', 'old@x.test'],
    ],
    [{ field: 'created_at', operator: 'within_last_days', days: 1 }, ['new@x.test']],
    [{ field: 'created_at', operator: 'within_last_days', days: 365 }, ['month@x.test', 'new@x.test']],
    [{ field: 'unsubscribed', operator: 'equals', value: true }, ['old@x.test']],
    [{ field: 'unsubscribed', operator: 'equals', value: false }, ['month@x.test', 'new@x.test']],
  ]);
});

test('engagement: opened and clicked (recorded through noteActivity) within or not within the last N days', async (t) => {
  const team = await p.createTeam();
  for (const email of ['recent@x.test', 'Stale@X.test', 'never@x.test']) await createContact(p, team, { email });
  const day = 24 * 3600 * 1000;
  const ago = (days: number) => new Date(Date.now() - days * day);
  await p.db.transaction((trx) =>
    noteActivity(trx, [
      { teamId: team.id, address: 'RECENT@x.test', kind: 'opened', at: ago(2) },
      { teamId: team.id, address: 'recent@x.test', kind: 'clicked', at: ago(2) },
      { teamId: team.id, address: 'stale@x.test', kind: 'opened', at: ago(40) },
    ]),
  );
  // Another team's activity at the same address is not this team's.
  const other = await p.createTeam();
  await p.db.transaction((trx) =>
    noteActivity(trx, [{ teamId: other.id, address: 'never@x.test', kind: 'opened', at: ago(0) }]),
  );
  const e = (field: string, operator: string, days: number) => ({ field, operator, days });
  await expectMatches(t, team, [
    [e('opened', 'within_last_days', 7), ['recent@x.test']],
    [e('opened', 'within_last_days', 60), ['Stale@x.test', 'recent@x.test']],
    [e('opened', 'not_within_last_days', 7), ['Stale@x.test', 'never@x.test']],
    [e('clicked', 'within_last_days', 30), ['recent@x.test']],
    [e('clicked', 'not_within_last_days', 30), ['Stale@x.test', 'never@x.test']],
    [e('received', 'within_last_days', 3650), []],
    [e('received', 'not_within_last_days', 1), ['Stale@x.test', 'never@x.test', 'recent@x.test']],
  ]);
});

test('groups: all, any, not, nested; a lone condition as the whole filter', async (t) => {
  const team = await p.createTeam();
  await created(p, team, '/contact-properties', { key: 'plan', type: 'string' });
  await createContact(p, team, { email: 'a@x.test', first_name: 'Ann', properties: { plan: 'pro' } });
  await createContact(p, team, { email: 'b@x.test', first_name: 'Ben', properties: { plan: 'free' } });
  await createContact(p, team, { email: 'c@y.test', first_name: 'Cat', properties: { plan: 'pro' } });
  await createContact(p, team, { email: 'd@y.test' });
  const pro = { field: 'property', key: 'plan', operator: 'equals', value: 'pro' };
  const atX = { field: 'email', operator: 'ends_with', value: '@x.test' };
  const named = { field: 'first_name', operator: 'is_set' };
  await expectMatches(t, team, [
    [pro, ['a@x.test', 'c@y.test']],
    [{ all: [pro, atX] }, ['a@x.test']],
    [{ any: [pro, atX] }, ['a@x.test', 'b@x.test', 'c@y.test']],
    [{ not: pro }, ['b@x.test', 'd@y.test']],
    [{ not: { any: [pro, named] } }, ['d@y.test']],
    [{ all: [named, { any: [{ not: atX }, { all: [pro, atX] }] }] }, ['a@x.test', 'c@y.test']],
    [
      { any: [{ all: [{ not: named }] }, { all: [{ any: [{ not: { not: pro } }] }] }] },
      ['a@x.test', 'c@y.test', 'd@y.test'],
    ],
  ]);
});

test('a property or topic deleted after the filter was written: its conditions match what is left', async (t) => {
  const team = await p.createTeam();
  const property = await created(p, team, '/contact-properties', { key: 'plan', type: 'string' });
  const topic = await createTopic(p, team, { name: 'News', default_subscription: 'opt_in' });
  await createContact(p, team, { email: 'a@x.test', properties: { plan: 'pro' } });
  const pro = { field: 'property', key: 'plan', operator: 'equals', value: 'pro' };
  const subscribed = { field: 'topic', topic_id: topic, operator: 'subscribed' };
  t.deepEqual(await matching(p, team, pro), ['a@x.test']);
  t.deepEqual(await matching(p, team, subscribed), ['a@x.test']);
  const bySegment = await p.request('POST', '/segments', {
    key: team.key,
    body: { name: 's', filter: { any: [pro, subscribed] } },
  });
  t.is((await p.request('DELETE', `/contact-properties/${property}`, { key: team.key })).status, 200);
  t.is((await p.request('DELETE', `/topics/${topic}`, { key: team.key })).status, 200);
  const got = await p.request('GET', `/segments/${bySegment.body.id}`, { key: team.key });
  t.is(got.status, 200, got.text);
  t.is(got.body.count, 0);
  t.deepEqual(got.body.filter, { any: [pro, subscribed] });
  const negated = await p.request('PATCH', `/segments/${bySegment.body.id}`, { key: team.key, body: { name: 'kept' } });
  t.is(negated.status, 200);
  t.like((await p.request('GET', `/segments/${bySegment.body.id}`, { key: team.key })).body, {
    name: 'kept',
    count: 0,
  });
});
