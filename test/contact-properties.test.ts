// Contact properties (`/contact-properties`): typed custom fields with key rules and fallback values, scoped by
// team; deleting one removes its values from every contact.
import test from 'ava';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { isError } from './helpers/http.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function createProperty(team: TestTeam, body: Record<string, unknown>): Promise<string> {
  const res = await p.request('POST', '/contact-properties', { key: team.key, body });
  if (res.status !== 201) throw new Error(`POST /contact-properties answered ${res.status} ${res.text}`);
  return res.body.id;
}

test('create answers 201 {object, id}; each type reads back with its fallback value', async (t) => {
  const team = await p.createTeam();
  const created = await p.request('POST', '/contact-properties', {
    key: team.key,
    body: { key: 'company_name', type: 'string', fallback_value: 'Acme' },
  });
  t.is(created.status, 201, created.text);
  t.deepEqual(Object.keys(created.body).sort(), ['id', 'object']);
  t.is(created.body.object, 'contact_property');
  const got = await p.request('GET', `/contact-properties/${created.body.id}`, { key: team.key });
  t.is(got.status, 200);
  t.deepEqual(Object.keys(got.body).sort(), ['created_at', 'fallback_value', 'id', 'key', 'object', 'type']);
  t.like(got.body, { object: 'contact_property', key: 'company_name', type: 'string', fallback_value: 'Acme' });
  t.regex(got.body.created_at, iso);

  for (const [body, fallback] of [
    [{ key: 'Seats', type: 'number', fallback_value: 3.5 }, 3.5],
    [{ key: 'vip', type: 'boolean', fallback_value: false }, false],
    [{ key: 'no_fallback', type: 'string' }, null],
    [{ key: 'null_fallback', type: 'number', fallback_value: null }, null],
    [{ key: 'x'.repeat(50), type: 'string', fallback_value: 's'.repeat(2000) }, 's'.repeat(2000)],
  ] as const) {
    const id = await createProperty(team, body);
    const read = await p.request('GET', `/api/v1/contact-properties/${id}`, { key: team.key });
    t.like(read.body, { key: body.key, type: body.type, fallback_value: fallback });
  }
});

test('create refuses a bad key, type or fallback in the Error shape, naming the field', async (t) => {
  const team = await p.createTeam();
  const cases: [Record<string, unknown>, string, string][] = [
    [{ type: 'string' }, 'missing_required_field', 'key'],
    [{ key: 'plan' }, 'missing_required_field', 'type'],
    [{ key: '', type: 'string' }, 'validation_error', 'key'],
    [{ key: 'x'.repeat(51), type: 'string' }, 'validation_error', 'key'],
    [{ key: 'has space', type: 'string' }, 'validation_error', 'key'],
    [{ key: 'dash-ed', type: 'string' }, 'validation_error', 'key'],
    [{ key: 'ümlaut', type: 'string' }, 'validation_error', 'key'],
    [{ key: '__proto__', type: 'string' }, 'validation_error', 'key'],
    [{ key: 'plan', type: 'date' }, 'validation_error', 'type'],
    [{ key: 'plan', type: 'string', fallback_value: 7 }, 'validation_error', 'fallback_value'],
    [{ key: 'plan', type: 'number', fallback_value: '7' }, 'validation_error', 'fallback_value'],
    [{ key: 'plan', type: 'boolean', fallback_value: 'true' }, 'validation_error', 'fallback_value'],
    [{ key: 'plan', type: 'string', fallback_value: 's'.repeat(2001) }, 'validation_error', 'fallback_value'],
    [{ key: 'plan', type: 'string', fallback_value: { a: 1 } }, 'validation_error', 'fallback_value'],
  ];
  for (const [body, error, path] of cases) {
    const res = await p.request('POST', '/contact-properties', { key: team.key, body });
    isError(t, res, 422, error);
    t.deepEqual(
      res.body.errors.map((e: { path: string }) => e.path),
      [path],
      JSON.stringify(body),
    );
    t.true(res.body.message.includes(path), res.body.message);
  }
  t.is((await p.db('contact_properties').where({ team_id: team.id })).length, 0);

  // A key is unique in the team (exactly as written), not across teams.
  await createProperty(team, { key: 'plan', type: 'string' });
  const again = await p.request('POST', '/contact-properties', {
    key: team.key,
    body: { key: 'plan', type: 'number' },
  });
  isError(t, again, 422, 'validation_error');
  t.is(again.body.errors[0].path, 'key');
  t.regex(again.body.message, /already exists/);
  t.truthy(await createProperty(await p.createTeam(), { key: 'plan', type: 'number' }));
});

test('list pages newest first; update changes only the fallback; key and type are fixed', async (t) => {
  const team = await p.createTeam();
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push(await createProperty(team, { key: `k${i}`, type: 'number' }));
  const page = await p.request('GET', '/contact-properties?limit=2', { key: team.key });
  t.like(page.body, { object: 'list', has_more: true });
  t.deepEqual(
    page.body.data.map((x: { id: string }) => x.id),
    [ids[2], ids[1]],
  );
  t.deepEqual(Object.keys(page.body.data[0]).sort(), ['created_at', 'fallback_value', 'id', 'key', 'type']);
  const rest = await p.request('GET', `/contact-properties?after=${ids[1]}`, { key: team.key });
  t.deepEqual(rest.body, {
    object: 'list',
    has_more: false,
    data: [{ id: ids[0], key: 'k0', type: 'number', fallback_value: null, created_at: rest.body.data[0].created_at }],
  });

  const id = ids[0];
  const set = await p.request('PATCH', `/contact-properties/${id}`, { key: team.key, body: { fallback_value: 12 } });
  t.is(set.status, 200, set.text);
  t.deepEqual(set.body, { object: 'contact_property', id });
  t.like((await p.request('GET', `/contact-properties/${id}`, { key: team.key })).body, { fallback_value: 12 });
  // The same key and type sent back are accepted; other values are refused and change nothing.
  const same = await p.request('PATCH', `/contact-properties/${id}`, {
    key: team.key,
    body: { key: 'k0', type: 'number', fallback_value: null },
  });
  t.is(same.status, 200, same.text);
  t.like((await p.request('GET', `/contact-properties/${id}`, { key: team.key })).body, { fallback_value: null });
  for (const [body, path] of [
    [{ key: 'renamed' }, 'key'],
    [{ type: 'string' }, 'type'],
    [{ fallback_value: 'twelve' }, 'fallback_value'],
    [{ fallback_value: true }, 'fallback_value'],
  ] as const) {
    const bad = await p.request('PATCH', `/contact-properties/${id}`, { key: team.key, body });
    isError(t, bad, 422, 'validation_error');
    t.is(bad.body.errors[0].path, path, JSON.stringify(body));
  }
  t.like((await p.request('GET', `/contact-properties/${id}`, { key: team.key })).body, {
    key: 'k0',
    type: 'number',
    fallback_value: null,
  });
  isError(
    t,
    await p.request('PATCH', `/contact-properties/not-a-uuid`, { key: team.key, body: {} }),
    422,
    'invalid_parameter',
  );
});

test("delete answers {object, id, deleted}; every contact's value of the property goes with it", async (t) => {
  const team = await p.createTeam();
  const plan = await createProperty(team, { key: 'plan', type: 'string' });
  await createProperty(team, { key: 'seats', type: 'number' });
  for (const email of ['a@example.com', 'b@example.com'])
    t.is(
      (
        await p.request('POST', '/contacts', {
          key: team.key,
          body: { email, properties: { plan: 'pro', seats: 4 } },
        })
      ).status,
      201,
    );
  const other = await p.createTeam();
  await createProperty(other, { key: 'plan', type: 'string' });
  await p.request('POST', '/contacts', { key: other.key, body: { email: 'a@example.com', properties: { plan: 'x' } } });
  const before = await p.db('contacts').where({ team_id: team.id }).orderBy('id').select('updated_at');

  const res = await p.request('DELETE', `/contact-properties/${plan}`, { key: team.key });
  t.deepEqual(res.body, { object: 'contact_property', id: plan, deleted: true });
  isError(t, await p.request('GET', `/contact-properties/${plan}`, { key: team.key }), 404, 'not_found');
  t.is(
    (await p.request('GET', `/contact-properties/${plan}`, { key: team.key })).body.message,
    'Contact property not found.',
  );
  const a = await p.request('GET', '/contacts/a@example.com', { key: team.key });
  t.deepEqual(a.body.properties, { seats: { type: 'number', value: 4 } });
  const rows = await p.db('contacts').where({ team_id: team.id }).orderBy('id').select('properties', 'updated_at');
  t.deepEqual(
    rows.map((r) => r.properties),
    [{ seats: 4 }, { seats: 4 }],
  );
  t.true(rows.every((r, i) => r.updated_at >= before[i].updated_at));
  // Another team's property of the same key and its values are untouched.
  t.deepEqual((await p.request('GET', '/contacts/a@example.com', { key: other.key })).body.properties, {
    plan: { type: 'string', value: 'x' },
  });
  // The key is free again, even for another type, and no old value comes back with it.
  await createProperty(team, { key: 'plan', type: 'number' });
  t.deepEqual((await p.request('GET', '/contacts/b@example.com', { key: team.key })).body.properties, {
    seats: { type: 'number', value: 4 },
  });
  isError(t, await p.request('DELETE', `/contact-properties/${plan}`, { key: team.key }), 404, 'not_found');
});

test("another team's property is not found for any operation, and unchanged", async (t) => {
  const owner = await p.createTeam();
  const other = await p.createTeam();
  const id = await createProperty(owner, { key: 'plan', type: 'string', fallback_value: 'free' });
  isError(t, await p.request('GET', `/contact-properties/${id}`, { key: other.key }), 404, 'not_found');
  isError(
    t,
    await p.request('PATCH', `/contact-properties/${id}`, { key: other.key, body: { fallback_value: 'x' } }),
    404,
    'not_found',
  );
  isError(t, await p.request('DELETE', `/contact-properties/${id}`, { key: other.key }), 404, 'not_found');
  t.deepEqual((await p.request('GET', '/contact-properties', { key: other.key })).body.data, []);
  t.like((await p.request('GET', `/contact-properties/${id}`, { key: owner.key })).body, { fallback_value: 'free' });
  // Nor can another team write values under it.
  const write = await p.request('POST', '/contacts', {
    key: other.key,
    body: { email: 'c@example.com', properties: { plan: 'pro' } },
  });
  isError(t, write, 422, 'validation_error');
  t.is(write.body.errors[0].path, 'properties.plan');
});
