// The official `resend` SDK (6.38) against the audience area, as a customer's app calls it: every method of
// contacts (with and without `audienceId`), contacts.segments, contacts.topics, contactProperties, segments and
// audiences, each answer read the way the SDK hands it back.
import test from 'ava';
import { Resend } from 'resend';
import { startPlatform, type Platform } from './helpers/platform.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});

/** A client of a team of its own: the tests run at once and each reads whole lists. */
async function client(): Promise<Resend> {
  const team = await p.createTeam('SDK audience');
  return new Resend(team.key, { baseUrl: p.url } as never);
}
test.after.always(async () => {
  await p?.close();
});

/** The SDK's answer, its data when there was no error (the error in the assertion message otherwise). */
function ok<T>(t: { is: (a: unknown, b: unknown, m?: string) => void }, res: { data: T | null; error: unknown }): T {
  t.is(res.error, null, JSON.stringify(res.error));
  return res.data as T;
}

test('contactProperties: create, list, get, update, remove', async (t) => {
  const resend = await client();
  const created = ok(
    t,
    await resend.contactProperties.create({ key: 'company', type: 'string', fallbackValue: 'n/a' }),
  );
  t.is(created.object, 'contact_property');
  const id = created.id;
  const got = ok(t, await resend.contactProperties.get(id));
  t.like(got, { object: 'contact_property', id, key: 'company', type: 'string', fallbackValue: 'n/a' });
  t.truthy(got.createdAt);
  ok(t, await resend.contactProperties.create({ key: 'seats', type: 'number', fallbackValue: 1 }));
  const list = ok(t, await resend.contactProperties.list({ limit: 10 }));
  t.deepEqual(
    list.data.map((x) => [x.key, x.fallbackValue]),
    [
      ['seats', 1],
      ['company', 'n/a'],
    ],
  );
  t.like(ok(t, await resend.contactProperties.update({ id, fallbackValue: 'unknown' })), {
    object: 'contact_property',
    id,
  });
  t.is(ok(t, await resend.contactProperties.get(id)).fallbackValue, 'unknown');
  t.like(ok(t, await resend.contactProperties.remove(id)), { object: 'contact_property', id, deleted: true });
  t.like((await resend.contactProperties.get(id)).error, { name: 'not_found', statusCode: 404 });
  // A fallback of the wrong type comes back as a named 422.
  const bad = await resend.contactProperties.create({ key: 'age', type: 'number', fallbackValue: 'old' as never });
  t.like(bad.error, { name: 'validation_error', statusCode: 422 });
});

test('segments and audiences (the same): create, list, get, update, remove', async (t) => {
  const resend = await client();
  const created = ok(t, await resend.segments.create({ name: 'Customers' }));
  t.like(created, { object: 'segment', name: 'Customers' });
  const id = created.id;
  t.like(ok(t, await resend.segments.get(id)), { object: 'segment', id, name: 'Customers', count: 0 });
  t.like(ok(t, await resend.segments.update(id, { name: 'Buyers' })), { object: 'segment', id });
  const viaAudiences = ok(t, await resend.audiences.create({ name: 'Leads' }));
  const list = ok(t, await resend.audiences.list());
  t.deepEqual(
    list.data.map((s) => s.name),
    ['Leads', 'Buyers'],
  );
  t.like(ok(t, await resend.audiences.get(viaAudiences.id)), { name: 'Leads' });
  t.like(ok(t, await resend.segments.list({ limit: 1 })), { object: 'list', has_more: true });
  t.like(ok(t, await resend.audiences.remove(viaAudiences.id)), {
    object: 'segment',
    id: viaAudiences.id,
    deleted: true,
  });
  t.like(ok(t, await resend.segments.remove(id)), { deleted: true });
  t.like((await resend.segments.get(id)).error, { name: 'not_found', statusCode: 404 });
});

test('contacts: create with properties, segments and topics; list, get, update, remove by id or email', async (t) => {
  const resend = await client();
  ok(t, await resend.contactProperties.create({ key: 'plan', type: 'string' }));
  const segment = ok(t, await resend.segments.create({ name: 'Trial' })).id;
  const topic = ok(t, await resend.topics.create({ name: 'Product news', defaultSubscription: 'opt_in' })).id;

  const created = ok(
    t,
    await resend.contacts.create({
      email: 'Steve@Example.com',
      firstName: 'Steve',
      lastName: 'Wozniak',
      unsubscribed: false,
      properties: { plan: 'trial' },
      segments: [{ id: segment }],
      topics: [{ id: topic, subscription: 'opt_out' }],
    }),
  );
  t.is(created.object, 'contact');
  const id = created.id;
  const got = ok(t, await resend.contacts.get(id));
  t.like(got, {
    object: 'contact',
    id,
    email: 'Steve@example.com',
    first_name: 'Steve',
    last_name: 'Wozniak',
    unsubscribed: false,
    // Ours, beside the SDK's Contact fields (it passes them through).
    never_subscribed: false,
  });
  t.deepEqual(got.properties, { plan: { type: 'string', value: 'trial' } });
  t.is(ok(t, await resend.contacts.get({ email: 'steve@example.com' })).id, id);

  ok(t, await resend.contacts.create({ email: 'other@example.com' }));
  t.deepEqual(
    ok(t, await resend.contacts.list()).data.map((c) => c.email),
    ['other@example.com', 'Steve@example.com'],
  );
  t.deepEqual(
    ok(t, await resend.contacts.list({ segmentId: segment })).data.map((c) => c.id),
    [id],
  );
  t.like(ok(t, await resend.contacts.list({ limit: 1 })), { has_more: true });

  t.like(
    ok(t, await resend.contacts.update({ id, firstName: null, unsubscribed: true, properties: { plan: 'paid' } })),
    { object: 'contact', id },
  );
  t.like(ok(t, await resend.contacts.update({ email: 'STEVE@example.com', lastName: 'Woz' })), { id });
  const updated = ok(t, await resend.contacts.get(id));
  t.like(updated, { first_name: null, last_name: 'Woz', unsubscribed: true });
  t.deepEqual(updated.properties, { plan: { type: 'string', value: 'paid' } });

  // Memberships and topic choices.
  const more = ok(t, await resend.segments.create({ name: 'Paying' })).id;
  t.like(ok(t, await resend.contacts.segments.add({ contactId: id, segmentId: more })), {
    object: 'contact_segment',
    contact_id: id,
    segment_id: more,
  } as never);
  const segments = ok(t, await resend.contacts.segments.list({ email: 'steve@example.com' }));
  t.deepEqual(
    segments.data.map((s) => s.name),
    ['Paying', 'Trial'],
  );
  t.like(ok(t, await resend.contacts.segments.remove({ email: 'steve@example.com', segmentId: segment })), {
    deleted: true,
  });
  t.deepEqual(
    ok(t, await resend.contacts.segments.list({ contactId: id })).data.map((s) => s.id),
    [more],
  );
  const topics = ok(t, await resend.contacts.topics.list({ id }));
  t.deepEqual(topics.data, [{ id: topic, name: 'Product news', description: null, subscription: 'opt_out' }]);
  t.is(
    ok(
      t,
      await resend.contacts.topics.update({
        email: 'steve@example.com',
        topics: [{ id: topic, subscription: 'opt_in' }],
      }),
    ).id,
    id,
    "the SDK's `{ id }`: the contact's",
  );
  t.is(ok(t, await resend.contacts.topics.list({ email: 'steve@example.com' })).data[0].subscription, 'opt_in');

  t.like(ok(t, await resend.contacts.remove({ email: 'steve@example.com' })), {
    object: 'contact',
    contact: 'steve@example.com',
    deleted: true,
  });
  t.like((await resend.contacts.get(id)).error, { name: 'not_found', statusCode: 404 });
  const other = ok(t, await resend.contacts.get({ email: 'other@example.com' })).id;
  t.like(ok(t, await resend.contacts.remove(other)), { contact: other, deleted: true });

  // Errors come back in the SDK's shape.
  t.like((await resend.contacts.create({ email: undefined as never })).error, {
    name: 'missing_required_field',
    statusCode: 422,
    message: 'Missing `email` field.',
  });
  const typed = await resend.contacts.create({ email: 'x@example.com', properties: { plan: 5 } });
  t.like(typed.error, { name: 'validation_error', statusCode: 422 });
  t.regex((typed.error as { message: string }).message, /properties\.plan/);
  // Imports (test/contact-imports.test.ts): a team that imported nothing lists none.
  t.deepEqual(ok(t, await resend.contacts.imports.list()), { object: 'list', has_more: false, data: [] });
});

test('contacts with audienceId: the legacy paths, an audience being a segment', async (t) => {
  const resend = await client();
  const audienceId = ok(t, await resend.audiences.create({ name: 'Newsletter' })).id;
  const created = ok(
    t,
    await resend.contacts.create({ audienceId, email: 'ann@example.com', firstName: 'Ann', unsubscribed: false }),
  );
  const id = created.id;
  t.deepEqual(
    ok(t, await resend.contacts.list({ audienceId })).data.map((c) => c.id),
    [id],
  );
  t.like(ok(t, await resend.contacts.get({ id, audienceId })), { email: 'ann@example.com', first_name: 'Ann' });
  t.like(ok(t, await resend.contacts.get({ email: 'ANN@example.com', audienceId })), { id });
  ok(t, await resend.contacts.update({ email: 'ann@example.com', audienceId, lastName: 'Lee' }));
  t.is(ok(t, await resend.contacts.get(id)).last_name, 'Lee');
  t.like(ok(t, await resend.segments.get(audienceId)), { count: 1 });
  t.like(ok(t, await resend.contacts.remove({ id, audienceId })), { contact: id, deleted: true });
  t.like((await resend.contacts.get({ id, audienceId })).error, { name: 'not_found', statusCode: 404 });
  t.like((await resend.contacts.create({ audienceId: crypto.randomUUID(), email: 'b@example.com' })).error, {
    name: 'not_found',
    statusCode: 404,
  });
});
