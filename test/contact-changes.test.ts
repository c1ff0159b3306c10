// Changes to contacts: updates (merged properties, a new address and its topic choices), deletion (memberships go,
// opt-outs stay), `contact.updated` and `contact.deleted`; another team's contact untouched by any of them.
import test from 'ava';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { isError } from './helpers/http.ts';
import { contactEvents, createContact, createSegment, createTopic, created } from './helpers/contacts.ts';
import { topicAudience } from '../shared/topics/subscriptions.ts';
import { contactEventData } from '../api/routes/contact-schemas.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

async function properties(team: TestTeam) {
  await created(p, team, '/contact-properties', { key: 'plan', type: 'string' });
  await created(p, team, '/contact-properties', { key: 'seats', type: 'number' });
  await created(p, team, '/contact-properties', { key: 'vip', type: 'boolean' });
}

test('update merges properties, clears names with null, sets unsubscribed; contact.updated only on a change', async (t) => {
  const team = await p.createTeam();
  await properties(team);
  const id = await createContact(p, team, {
    email: 'carol@example.com',
    first_name: 'Carol',
    last_name: 'Shaw',
    properties: { plan: 'free', seats: 1 },
  });
  const before = await p.db('contacts').where({ id }).first();
  const res = await p.request('PATCH', '/contacts/CAROL@example.com', {
    key: team.key,
    body: { first_name: null, unsubscribed: true, properties: { plan: 'pro', seats: null, vip: false } },
  });
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body, { object: 'contact', id });
  const got = (await p.request('GET', `/contacts/${id}`, { key: team.key })).body;
  t.like(got, { email: 'carol@example.com', first_name: null, last_name: 'Shaw', unsubscribed: true });
  t.deepEqual(got.properties, { plan: { type: 'string', value: 'pro' }, vip: { type: 'boolean', value: false } });
  const after = await p.db('contacts').where({ id }).first();
  t.true(after.updated_at > before.updated_at);
  t.deepEqual(after.created_at, before.created_at);

  // The same values again, an empty body, or only unknown keys: nothing changes and nothing is recorded.
  for (const body of [{ unsubscribed: true, properties: { plan: 'pro' } }, {}, { id, colour: 'red' }])
    t.is((await p.request('PATCH', `/contacts/${id}`, { key: team.key, body })).status, 200);
  const events = await contactEvents(p, team.id);
  t.deepEqual(
    events.map((e) => e.type),
    ['contact.created', 'contact.updated'],
  );
  t.like(events[1].data, { id, first_name: null, last_name: 'Shaw', unsubscribed: true, segment_ids: [] });
  t.is(events[1].data.updated_at, after.updated_at.toISOString());
  t.true(contactEventData.safeParse(events[1].data).success);

  // Refusals name the field and change nothing.
  for (const [body, path] of [
    [{ properties: { seats: 'many' } }, 'properties.seats'],
    [{ properties: { nope: 1 } }, 'properties.nope'],
    [{ email: 'not an address' }, 'email'],
    [{ unsubscribed: null }, 'unsubscribed'],
    [{ last_name: 'x'.repeat(257) }, 'last_name'],
  ] as const) {
    const bad = await p.request('PATCH', `/contacts/${id}`, { key: team.key, body });
    isError(t, bad, 422, 'validation_error');
    t.is(bad.body.errors[0].path, path, JSON.stringify(body));
  }
  t.deepEqual((await p.request('GET', `/contacts/${id}`, { key: team.key })).body, got);
  isError(
    t,
    await p.request('PATCH', '/contacts/nobody@example.com', { key: team.key, body: { first_name: 'x' } }),
    404,
    'not_found',
  );
});

test('a new address must be free; the topic choices follow it without overriding its own, and stay with the old', async (t) => {
  const team = await p.createTeam();
  const news = await createTopic(p, team, { name: 'News' });
  const offers = await createTopic(p, team, { name: 'Offers' });
  const id = await createContact(p, team, {
    email: 'dan@old.example',
    topics: [
      { id: news, subscription: 'opt_out' },
      { id: offers, subscription: 'opt_out' },
    ],
  });
  await createContact(p, team, { email: 'taken@example.com' });
  const taken = await p.request('PATCH', `/contacts/${id}`, { key: team.key, body: { email: 'TAKEN@example.com' } });
  isError(t, taken, 422, 'validation_error');
  t.is(taken.body.errors[0].path, 'email');
  // The new address already chose `opt_in` for Offers itself (through a preference page): that choice stands.
  await p.db('topic_subscriptions').insert({
    topic_id: offers,
    team_id: team.id,
    email: 'dan@new.example',
    subscription: 'opt_in',
  });
  const moved = await p.request('PATCH', `/contacts/${id}`, { key: team.key, body: { email: 'Dan@NEW.example' } });
  t.is(moved.status, 200, moved.text);
  t.is((await p.request('GET', '/contacts/dan@new.example', { key: team.key })).body.id, id);
  isError(t, await p.request('GET', '/contacts/dan@old.example', { key: team.key }), 404, 'not_found');
  const choices = await p.db('topic_subscriptions').where({ team_id: team.id }).orderBy(['email', 'topic_id']);
  t.deepEqual(
    choices.map((c) => [c.email, c.topic_id, c.subscription]),
    [
      ['dan@new.example', news, 'opt_out'],
      ['dan@new.example', offers, 'opt_in'],
      ['dan@old.example', news, 'opt_out'],
      ['dan@old.example', offers, 'opt_out'],
    ],
  );
  // Only the case of the address changes: still the same contact, no conflict with itself.
  t.is(
    (await p.request('PATCH', `/contacts/${id}`, { key: team.key, body: { email: 'DAN@new.example' } })).status,
    200,
  );
  t.is((await p.request('GET', `/contacts/${id}`, { key: team.key })).body.email, 'DAN@new.example');
});

test('delete by id or address answers {object, id, contact, deleted}; memberships go, topic choices stay', async (t) => {
  const team = await p.createTeam();
  const segment = await createSegment(p, team);
  const topic = await createTopic(p, team);
  const id = await createContact(p, team, {
    email: 'eve@example.com',
    segments: [segment],
    topics: [{ id: topic, subscription: 'opt_out' }],
  });
  const res = await p.request('DELETE', '/contacts/Eve@Example.com', { key: team.key });
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body, { object: 'contact', id, contact: 'Eve@Example.com', deleted: true });
  isError(t, await p.request('GET', `/contacts/${id}`, { key: team.key }), 404, 'not_found');
  isError(t, await p.request('DELETE', `/contacts/${id}`, { key: team.key }), 404, 'not_found');
  t.deepEqual(await p.db('contact_segments').where({ contact_id: id }), []);
  t.like((await p.request('GET', `/segments/${segment}`, { key: team.key })).body, { count: 0 });
  // The address opted out and still is: deleting the contact does not re-subscribe it.
  t.false((await topicAudience(p.db, team.id, topic, ['eve@example.com']))!.subscribed('eve@example.com'));
  const events = await contactEvents(p, team.id);
  t.deepEqual(
    events.map((e) => e.type),
    ['contact.created', 'contact.deleted'],
  );
  t.like(events[1].data, { id, email: 'eve@example.com', segment_ids: [segment] });
  t.true(contactEventData.safeParse(events[1].data).success);

  const byId = await createContact(p, team, { email: 'eve@example.com' });
  t.deepEqual((await p.request('DELETE', `/contacts/${byId}`, { key: team.key })).body, {
    object: 'contact',
    id: byId,
    contact: byId,
    deleted: true,
  });
});

test("another team's contact is not found by id or address, and is untouched", async (t) => {
  const owner = await p.createTeam();
  const other = await p.createTeam();
  const id = await createContact(p, owner, { email: 'frank@example.com', first_name: 'Frank' });
  for (const ref of [id, 'frank@example.com']) {
    isError(t, await p.request('GET', `/contacts/${ref}`, { key: other.key }), 404, 'not_found');
    isError(
      t,
      await p.request('PATCH', `/contacts/${ref}`, { key: other.key, body: { first_name: 'Mallory' } }),
      404,
      'not_found',
    );
    isError(t, await p.request('DELETE', `/contacts/${ref}`, { key: other.key }), 404, 'not_found');
  }
  t.like((await p.request('GET', `/contacts/${id}`, { key: owner.key })).body, { first_name: 'Frank' });
  t.deepEqual(await contactEvents(p, other.id), []);
});
