// Contacts (`/contacts`): create, list and retrieve by id or address, typed properties, segments and topic choices
// given at creation, every refusal naming its field, `contact.created` and the documented payloads. Changes and
// deletion: contact-changes.test.ts.
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

const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function properties(team: TestTeam) {
  await created(p, team, '/contact-properties', { key: 'plan', type: 'string' });
  await created(p, team, '/contact-properties', { key: 'seats', type: 'number' });
  await created(p, team, '/contact-properties', { key: 'vip', type: 'boolean' });
}

test('create answers 201 {object, id}; the contact reads back by id and by address, with typed properties', async (t) => {
  const team = await p.createTeam();
  await properties(team);
  const res = await p.request('POST', '/contacts', {
    key: team.key,
    body: {
      email: 'Steve.Wozniak@Example.COM',
      first_name: ' Steve ',
      last_name: 'Wozniak',
      properties: { plan: 'pro', seats: 12, vip: true },
      colour: 'ignored',
    },
  });
  t.is(res.status, 201, res.text);
  t.deepEqual(Object.keys(res.body).sort(), ['id', 'object']);
  t.is(res.body.object, 'contact');
  const id = res.body.id;

  const got = await p.request('GET', `/contacts/${id}`, { key: team.key });
  t.is(got.status, 200, got.text);
  t.deepEqual(Object.keys(got.body).sort(), [
    'created_at',
    'email',
    'first_name',
    'id',
    'last_name',
    'never_subscribed',
    'object',
    'properties',
    'unsubscribed',
  ]);
  t.like(got.body, {
    object: 'contact',
    id,
    never_subscribed: false,
    // The local part as given, the domain lower case.
    email: 'Steve.Wozniak@example.com',
    first_name: 'Steve',
    last_name: 'Wozniak',
    unsubscribed: false,
  });
  t.deepEqual(got.body.properties, {
    plan: { type: 'string', value: 'pro' },
    seats: { type: 'number', value: 12 },
    vip: { type: 'boolean', value: true },
  });
  t.regex(got.body.created_at, iso);

  // By address, in any case, URL-encoded or not, and under /api/v1.
  for (const path of [
    '/contacts/Steve.Wozniak@example.com',
    '/contacts/steve.wozniak@EXAMPLE.com',
    `/contacts/${encodeURIComponent('STEVE.WOZNIAK@example.com')}`,
    '/api/v1/contacts/steve.wozniak@example.com',
  ]) {
    const byEmail = await p.request('GET', path, { key: team.key });
    t.is(byEmail.status, 200, `${path}: ${byEmail.text}`);
    t.is(byEmail.body.id, id);
  }
  isError(t, await p.request('GET', '/contacts/nobody@example.com', { key: team.key }), 404, 'not_found');
  t.is((await p.request('GET', '/contacts/not-an-address', { key: team.key })).body.message, 'Contact not found.');

  // An internationalised domain is stored in its ASCII form and found by either; a plus and an empty name.
  const idn = await createContact(p, team, { email: 'Ann@Bücher.Example', first_name: '  ', last_name: null });
  t.like((await p.request('GET', `/contacts/${idn}`, { key: team.key })).body, {
    email: 'Ann@xn--bcher-kva.example',
    first_name: null,
    last_name: null,
    properties: {},
  });
  t.is(
    (await p.request('GET', `/contacts/${encodeURIComponent('ann@bücher.example')}`, { key: team.key })).body.id,
    idn,
  );
  const plus = await createContact(p, team, { email: 'a+tag@example.com', unsubscribed: true });
  const read = await p.request('GET', '/contacts/a+tag@example.com', { key: team.key });
  t.like(read.body, { id: plus, unsubscribed: true });
});

test('create refuses a missing or bad field in the Error shape, naming it, and creates nothing', async (t) => {
  const team = await p.createTeam();
  await properties(team);
  const other = await p.createTeam();
  const othersSegment = await createSegment(p, other);
  const othersTopic = await createTopic(p, other);
  const segment = await createSegment(p, team);

  const missing = await p.request('POST', '/contacts', { key: team.key, body: { first_name: 'x' } });
  isError(t, missing, 422, 'missing_required_field');
  t.is(missing.body.message, 'Missing `email` field.');
  isError(t, await p.request('POST', '/contacts', { key: team.key }), 422, 'missing_required_field');

  const cases: [Record<string, unknown>, string][] = [
    [{ email: '' }, 'email'],
    [{ email: 'no-at-sign' }, 'email'],
    [{ email: 'two@@example.com' }, 'email'],
    [{ email: 'a@localhost' }, 'email'],
    [{ email: 'spa ce@example.com' }, 'email'],
    [{ email: `${'a'.repeat(65)}@example.com` }, 'email'],
    [{ email: 7 }, 'email'],
    [{ email: 'a@example.com', first_name: 'x'.repeat(257) }, 'first_name'],
    [{ email: 'a@example.com', last_name: 5 }, 'last_name'],
    [{ email: 'a@example.com', unsubscribed: 'yes' }, 'unsubscribed'],
    [{ email: 'a@example.com', properties: { plan: 7 } }, 'properties.plan'],
    [{ email: 'a@example.com', properties: { seats: '7' } }, 'properties.seats'],
    [{ email: 'a@example.com', properties: { vip: 'true' } }, 'properties.vip'],
    [{ email: 'a@example.com', properties: { plan: 'p'.repeat(2001) } }, 'properties.plan'],
    [{ email: 'a@example.com', properties: { plan: { nested: true } } }, 'properties.plan'],
    [{ email: 'a@example.com', properties: { unknown_key: 'x' } }, 'properties.unknown_key'],
    [{ email: 'a@example.com', properties: 'plan=pro' }, 'properties'],
    [
      { email: 'a@example.com', properties: Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`k${i}`, 1])) },
      'properties',
    ],
    [{ email: 'a@example.com', segments: [segment, 'not-a-uuid'] }, 'segments.1'],
    [{ email: 'a@example.com', segments: [{ id: othersSegment }] }, 'segments.0.id'],
    [{ email: 'a@example.com', segments: [othersSegment] }, 'segments.0'],
    [{ email: 'a@example.com', audience_id: othersSegment }, 'audience_id'],
    [{ email: 'a@example.com', topics: [{ id: othersTopic, subscription: 'opt_in' }] }, 'topics.0.id'],
    [{ email: 'a@example.com', topics: [{ id: othersTopic, subscription: 'maybe' }] }, 'topics.0.subscription'],
    [{ email: 'a@example.com', topics: [{ subscription: 'opt_in' }] }, 'topics.0.id'],
  ];
  for (const [body, path] of cases) {
    const res = await p.request('POST', '/contacts', { key: team.key, body });
    t.is(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
    t.true(['validation_error', 'missing_required_field'].includes(res.body.name), res.text);
    t.is(res.body.errors[0].path, path, JSON.stringify(body));
    t.true(res.body.message.includes(path), res.body.message);
  }
  // Another team's ids are named as unknown, never as someone else's.
  const foreign = await p.request('POST', '/contacts', {
    key: team.key,
    body: { email: 'a@example.com', segments: [othersSegment] },
  });
  t.regex(foreign.body.message, /no segment of this team has the id/);
  t.is((await p.db('contacts').where({ team_id: team.id })).length, 0);
  t.deepEqual(await contactEvents(p, team.id), []);

  // An address is unique in the team without regard to case, but the same address may be another team's contact.
  const first = await createContact(p, team, { email: 'Ann@example.com' });
  const again = await p.request('POST', '/contacts', { key: team.key, body: { email: 'ann@EXAMPLE.com' } });
  isError(t, again, 422, 'validation_error');
  t.is(again.body.errors[0].path, 'email');
  t.regex(again.body.message, /already exists/);
  t.not(await createContact(p, other, { email: 'ann@example.com' }), first);
});

test('segments as ids or {id}, legacy audience_id and topic choices at creation; contact.created', async (t) => {
  const team = await p.createTeam();
  const [s1, s2, s3] = [
    await createSegment(p, team, 'One'),
    await createSegment(p, team, 'Two'),
    await createSegment(p, team, 'Three'),
  ];
  const news = await createTopic(p, team, { name: 'News', default_subscription: 'opt_out' });
  const offers = await createTopic(p, team, { name: 'Offers', default_subscription: 'opt_in' });
  const id = await createContact(p, team, {
    email: 'Bob@Example.com',
    segments: [s1, { id: s2 }, s1],
    audience_id: s3,
    topics: [
      { id: news, subscription: 'opt_out' },
      { id: offers, subscription: 'opt_out' },
      { id: news, subscription: 'opt_in' },
    ],
  });
  const segments = await p.request('GET', `/contacts/${id}/segments`, { key: team.key });
  t.deepEqual(
    segments.body.data.map((s: { name: string }) => s.name),
    ['Three', 'Two', 'One'],
  );
  // The choices are the send path's: by address, any case.
  const newsAudience = await topicAudience(p.db, team.id, news, ['bob@example.com']);
  t.true(newsAudience!.subscribed('BOB@example.com'));
  t.false((await topicAudience(p.db, team.id, offers, ['bob@example.com']))!.subscribed('bob@example.com'));

  const events = await contactEvents(p, team.id);
  t.is(events.length, 1);
  t.is(events[0].type, 'contact.created');
  const row = await p.db('contacts').where({ id }).first();
  t.deepEqual(events[0].data, {
    id,
    email: 'Bob@example.com',
    first_name: null,
    last_name: null,
    unsubscribed: false,
    segment_ids: [s1, s2, s3].sort(),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  });
  t.true(contactEventData.safeParse(events[0].data).success, 'the payload is the documented one');
});

test('list pages newest first, optionally one segment (or audience) of the team', async (t) => {
  const team = await p.createTeam();
  const segment = await createSegment(p, team);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++)
    ids.push(await createContact(p, team, { email: `c${i}@example.com`, segments: i % 2 ? [segment] : [] }));
  const newest = [...ids].reverse();
  const all = await p.request('GET', '/contacts', { key: team.key });
  t.like(all.body, { object: 'list', has_more: false });
  t.deepEqual(
    all.body.data.map((c: { id: string }) => c.id),
    newest,
  );
  t.deepEqual(Object.keys(all.body.data[0]).sort(), [
    'created_at',
    'email',
    'first_name',
    'id',
    'last_name',
    'unsubscribed',
  ]);
  const page = await p.request('GET', `/contacts?limit=2&after=${newest[1]}`, { key: team.key });
  t.true(page.body.has_more);
  t.deepEqual(
    page.body.data.map((c: { id: string }) => c.id),
    newest.slice(2, 4),
  );
  const back = await p.request('GET', `/contacts?limit=2&before=${newest[2]}`, { key: team.key });
  t.deepEqual(
    back.body.data.map((c: { id: string }) => c.id),
    newest.slice(0, 2),
  );
  for (const query of [`segment_id=${segment}`, `audience_id=${segment}`]) {
    const members = await p.request('GET', `/contacts?${query}`, { key: team.key });
    t.deepEqual(
      members.body.data.map((c: { id: string }) => c.id),
      [ids[3], ids[1]],
      query,
    );
  }
  const onePage = await p.request('GET', `/contacts?segment_id=${segment}&limit=1`, { key: team.key });
  t.like(onePage.body, { has_more: true, data: [{ id: ids[3] }] });

  const other = await p.createTeam();
  for (const [query, field] of [
    [`segment_id=${segment}`, 'segment_id'],
    [`audience_id=${segment}`, 'audience_id'],
    ['segment_id=nope', 'segment_id'],
  ]) {
    const res = await p.request('GET', `/contacts?${query}`, { key: other.key });
    isError(t, res, 422, 'validation_error');
    t.deepEqual(
      res.body.errors.map((e: { path: string }) => e.path),
      [field],
    );
  }
  t.deepEqual((await p.request('GET', '/contacts', { key: other.key })).body.data, []);
  isError(t, await p.request('GET', '/contacts?limit=101', { key: team.key }), 422, 'validation_error');
});

test('the OpenAPI document describes the contact events it records', async (t) => {
  const doc = (await p.request('GET', '/openapi.json')).body;
  for (const type of ['contact.created', 'contact.updated', 'contact.deleted']) {
    const hook = doc.webhooks?.[type]?.post;
    t.truthy(hook, `${type} is documented`);
    const ref = hook.requestBody.content['application/json'].schema.$ref;
    const schema = doc.components.schemas[ref.replace('#/components/schemas/', '')];
    t.deepEqual(schema.properties.type, { type: 'string', const: type });
    t.deepEqual(schema.properties.data, { $ref: '#/components/schemas/ContactEventData' });
  }
  const data = doc.components.schemas.ContactEventData;
  t.deepEqual(Object.keys(data.properties).sort(), [
    'created_at',
    'email',
    'first_name',
    'id',
    'last_name',
    'segment_ids',
    'unsubscribed',
    'updated_at',
  ]);
  for (const [name, property] of Object.entries(data.properties as Record<string, { description?: string }>))
    t.truthy(property.description, `ContactEventData.${name} is described`);
});
