// Segments by hand (`/segments`, the memberships under `/contacts/{id_or_email}/segments`) and the legacy audiences
// paths, which are segments under their old name.
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { isError } from './helpers/http.ts';
import { contactEvents, createContact, createSegment } from './helpers/contacts.ts';
import { contactEventData } from '../api/routes/contact-schemas.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

test('create, list, retrieve (with its count), rename and delete a segment', async (t) => {
  const team = await p.createTeam();
  const res = await p.request('POST', '/segments', { key: team.key, body: { name: ' Customers ' } });
  t.is(res.status, 201, res.text);
  t.deepEqual(res.body, { object: 'segment', id: res.body.id, name: 'Customers' });
  const id = res.body.id;
  const got = await p.request('GET', `/segments/${id}`, { key: team.key });
  t.deepEqual(Object.keys(got.body).sort(), ['count', 'created_at', 'filter', 'id', 'name', 'object']);
  t.like(got.body, { object: 'segment', id, name: 'Customers', filter: null, count: 0 });
  t.regex(got.body.created_at, iso);

  const second = await createSegment(p, team, 'Leads');
  const list = await p.request('GET', '/segments', { key: team.key });
  t.deepEqual(
    list.body.data.map((s: { id: string; name: string }) => [s.id, s.name]),
    [
      [second, 'Leads'],
      [id, 'Customers'],
    ],
  );
  t.deepEqual(Object.keys(list.body.data[0]).sort(), ['created_at', 'id', 'name']);
  t.like((await p.request('GET', '/segments?limit=1', { key: team.key })).body, { has_more: true });

  const renamed = await p.request('PATCH', `/segments/${id}`, { key: team.key, body: { name: 'Buyers' } });
  t.deepEqual(renamed.body, { object: 'segment', id });
  t.is((await p.request('GET', `/segments/${id}`, { key: team.key })).body.name, 'Buyers');

  const contact = await createContact(p, team, { email: 'ida@example.com', segments: [id] });
  t.is((await p.request('GET', `/segments/${id}`, { key: team.key })).body.count, 1);
  const deleted = await p.request('DELETE', `/segments/${id}`, { key: team.key });
  t.deepEqual(deleted.body, { object: 'segment', id, deleted: true });
  isError(t, await p.request('GET', `/segments/${id}`, { key: team.key }), 404, 'not_found');
  t.is((await p.request('GET', `/segments/${id}`, { key: team.key })).body.message, 'Segment not found.');
  // The contact stays, without the membership.
  t.is((await p.request('GET', `/contacts/${contact}`, { key: team.key })).status, 200);
  t.deepEqual((await p.request('GET', `/contacts/${contact}/segments`, { key: team.key })).body.data, []);
});

test('a bad name is refused naming it (bad filters: segment-filter-input.test.ts)', async (t) => {
  const team = await p.createTeam();
  for (const [body, path, name] of [
    [{}, 'name', 'missing_required_field'],
    [{ name: '  ' }, 'name', 'validation_error'],
    [{ name: 'n'.repeat(101) }, 'name', 'validation_error'],
    [{ name: 7 }, 'name', 'validation_error'],
    [{ name: 'Filtered', filter: {} }, 'filter', 'validation_error'],
  ] as const) {
    const res = await p.request('POST', '/segments', { key: team.key, body });
    isError(t, res, 422, name);
    t.deepEqual(
      res.body.errors.map((e: { path: string }) => e.path),
      [path],
      JSON.stringify(body),
    );
  }
  t.deepEqual((await p.request('GET', '/segments', { key: team.key })).body.data, []);
  // The limit itself, and an `audience_id` (older clients) ignored.
  t.truthy(await createSegment(p, team, 'n'.repeat(100)));
  const id = await createSegment(p, team);
  isError(
    t,
    await p.request('PATCH', `/segments/${id}`, { key: team.key, body: { name: 'x', filter: {} } }),
    422,
    'validation_error',
  );
  isError(t, await p.request('PATCH', `/segments/${id}`, { key: team.key, body: {} }), 422, 'missing_required_field');
});

test('memberships by hand: add by id or address, list both ways, remove; contact.updated for each change', async (t) => {
  const team = await p.createTeam();
  const segment = await createSegment(p, team, 'VIP');
  const other = await createSegment(p, team, 'Other');
  const id = await createContact(p, team, { email: 'jo@example.com' });
  const before = await p.db('contacts').where({ id }).first();

  const added = await p.request('POST', `/contacts/JO@example.com/segments/${segment}`, { key: team.key });
  t.is(added.status, 201, added.text);
  t.deepEqual(added.body, { object: 'contact_segment', contact_id: id, segment_id: segment });
  // Adding again keeps the one membership and records nothing more.
  t.is((await p.request('POST', `/contacts/${id}/segments/${segment}`, { key: team.key })).status, 201);
  await p.request('POST', `/contacts/${id}/segments/${other}`, { key: team.key });
  t.true((await p.db('contacts').where({ id }).first()).updated_at > before.updated_at);

  const segments = await p.request('GET', `/contacts/${id}/segments`, { key: team.key });
  t.deepEqual(
    segments.body.data.map((s: { id: string; name: string }) => [s.id, s.name]),
    [
      [other, 'Other'],
      [segment, 'VIP'],
    ],
  );
  t.deepEqual(Object.keys(segments.body.data[0]).sort(), ['created_at', 'id', 'name']);
  t.regex(segments.body.data[0].created_at, iso);
  const members = await p.request('GET', `/segments/${segment}/contacts`, { key: team.key });
  t.like(members.body, { object: 'list', has_more: false, data: [{ id, email: 'jo@example.com' }] });

  const removed = await p.request('DELETE', `/contacts/jo@example.com/segments/${segment}`, { key: team.key });
  t.is(removed.status, 200, removed.text);
  t.deepEqual(removed.body, { object: 'contact_segment', contact_id: id, segment_id: segment, deleted: true });
  const again = await p.request('DELETE', `/contacts/${id}/segments/${segment}`, { key: team.key });
  isError(t, again, 404, 'not_found');
  t.regex(again.body.message, /not a member/);
  t.deepEqual((await p.request('GET', `/segments/${segment}/contacts`, { key: team.key })).body.data, []);

  const events = await contactEvents(p, team.id);
  t.deepEqual(
    events.map((e) => [e.type, e.data.segment_ids]),
    [
      ['contact.created', []],
      ['contact.updated', [segment]],
      ['contact.updated', [segment, other].sort()],
      ['contact.updated', [other]],
    ],
  );
  t.true(events.every((e) => contactEventData.safeParse(e.data).success));

  // An unknown contact or segment is 404 naming which.
  const missingSegment = await p.request('POST', `/contacts/${id}/segments/not-a-uuid`, { key: team.key });
  isError(t, missingSegment, 404, 'not_found');
  t.is(missingSegment.body.message, 'Segment not found.');
  const missingContact = await p.request('POST', `/contacts/nobody@example.com/segments/${segment}`, { key: team.key });
  t.is(missingContact.body.message, 'Contact not found.');
  isError(t, await p.request('GET', `/segments/${crypto.randomUUID()}/contacts`, { key: team.key }), 404, 'not_found');
});

test("another team's segment or contact: 404 on every path, nothing changed", async (t) => {
  const owner = await p.createTeam();
  const other = await p.createTeam();
  const segment = await createSegment(p, owner, 'Owned');
  const contact = await createContact(p, owner, { email: 'kim@example.com', segments: [segment] });
  const theirs = await createContact(p, other, { email: 'kim@example.com' });
  const theirSegment = await createSegment(p, other);
  for (const [method, path] of [
    ['GET', `/segments/${segment}`],
    ['DELETE', `/segments/${segment}`],
    ['GET', `/segments/${segment}/contacts`],
    ['POST', `/contacts/${theirs}/segments/${segment}`],
    ['POST', `/contacts/${contact}/segments/${theirSegment}`],
    ['DELETE', `/contacts/kim@example.com/segments/${segment}`],
    ['GET', `/audiences/${segment}`],
    ['GET', `/audiences/${segment}/contacts`],
    ['GET', `/audiences/${segment}/contacts/${contact}`],
  ]) {
    const res = await p.request(method, path, { key: other.key });
    isError(t, res, 404, 'not_found');
  }
  isError(
    t,
    await p.request('PATCH', `/segments/${segment}`, { key: other.key, body: { name: 'Stolen' } }),
    404,
    'not_found',
  );
  t.like((await p.request('GET', `/segments/${segment}`, { key: owner.key })).body, { name: 'Owned', count: 1 });
  t.deepEqual(await p.db('contact_segments').where({ team_id: other.id }), []);
});

test("audiences are segments under their old name; an audience's contacts are its members", async (t) => {
  const team = await p.createTeam();
  const created = await p.request('POST', '/audiences', { key: team.key, body: { name: 'Registered' } });
  t.is(created.status, 201, created.text);
  t.deepEqual(created.body, { object: 'audience', id: created.body.id, name: 'Registered' });
  const id = created.body.id;
  t.like((await p.request('GET', `/segments/${id}`, { key: team.key })).body, { name: 'Registered' });
  const segment = await createSegment(p, team, 'Made as a segment');
  const got = await p.request('GET', `/audiences/${segment}`, { key: team.key });
  t.deepEqual(got.body, {
    object: 'audience',
    id: segment,
    name: 'Made as a segment',
    created_at: got.body.created_at,
  });
  const list = await p.request('GET', '/audiences', { key: team.key });
  t.deepEqual(
    list.body.data.map((a: { id: string }) => a.id),
    [segment, id],
  );

  const contact = await p.request('POST', `/audiences/${id}/contacts`, {
    key: team.key,
    body: { email: 'Lee@Example.com', first_name: 'Lee' },
  });
  t.is(contact.status, 201, contact.text);
  const contactId = contact.body.id;
  t.deepEqual(contact.body, { object: 'contact', id: contactId });
  t.like((await p.request('GET', `/audiences/${id}/contacts/lee@example.com`, { key: team.key })).body, {
    object: 'contact',
    id: contactId,
    email: 'Lee@example.com',
    first_name: 'Lee',
  });
  t.like((await p.request('GET', `/audiences/${id}/contacts`, { key: team.key })).body, {
    data: [{ id: contactId }],
  });
  // A contact that is not a member is not found under the audience, though it exists.
  const outsider = await createContact(p, team, { email: 'out@example.com' });
  isError(t, await p.request('GET', `/audiences/${id}/contacts/${outsider}`, { key: team.key }), 404, 'not_found');
  isError(
    t,
    await p.request('PATCH', `/audiences/${id}/contacts/${outsider}`, { key: team.key, body: { first_name: 'x' } }),
    404,
    'not_found',
  );
  isError(t, await p.request('DELETE', `/audiences/${id}/contacts/${outsider}`, { key: team.key }), 404, 'not_found');
  const unknown = await p.request('POST', `/audiences/${crypto.randomUUID()}/contacts`, {
    key: team.key,
    body: { email: 'x@example.com' },
  });
  isError(t, unknown, 404, 'not_found');
  t.is(unknown.body.message, 'Audience not found.');
  t.is((await p.request('GET', '/audiences/not-a-uuid', { key: team.key })).body.message, 'Audience not found.');

  const patched = await p.request('PATCH', `/audiences/${id}/contacts/${contactId}`, {
    key: team.key,
    body: { last_name: 'Ray', unsubscribed: true },
  });
  t.deepEqual(patched.body, { object: 'contact', id: contactId });
  t.like((await p.request('GET', `/contacts/${contactId}`, { key: team.key })).body, {
    last_name: 'Ray',
    unsubscribed: true,
  });
  const removed = await p.request('DELETE', `/audiences/${id}/contacts/LEE@example.com`, { key: team.key });
  t.deepEqual(removed.body, { object: 'contact', id: contactId, contact: 'LEE@example.com', deleted: true });
  isError(t, await p.request('GET', `/contacts/${contactId}`, { key: team.key }), 404, 'not_found');

  t.deepEqual((await p.request('DELETE', `/audiences/${id}`, { key: team.key })).body, {
    object: 'audience',
    id,
    deleted: true,
  });
  isError(t, await p.request('GET', `/segments/${id}`, { key: team.key }), 404, 'not_found');
  t.is((await p.request('GET', `/contacts/${outsider}`, { key: team.key })).status, 200);
});
