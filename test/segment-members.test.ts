// A segment's members by hand, by its filter, or both: counted once each, listed in pages newest first on every path
// that lists them (the segment's contacts, /contacts?segment_id, the audiences alias, the official SDK), walked in id
// order by membersAfter (what broadcasts will use), and changing as soon as a contact does.
import test from 'ava';
import { Resend } from 'resend';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { isError } from './helpers/http.ts';
import { createContact, created } from './helpers/contacts.ts';
import { filterSegment, members } from './helpers/segment-filters.ts';
import { membersAfter } from '../shared/segments/membership.ts';
import { getSegment } from '../shared/segments/segments.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

const pro = { field: 'property', key: 'plan', operator: 'equals', value: 'pro' };

async function teamWithPlans(): Promise<TestTeam> {
  const team = await p.createTeam();
  await created(p, team, '/contact-properties', { key: 'plan', type: 'string' });
  return team;
}

test('hand members and filter matches together, each counted once; every listing path agrees', async (t) => {
  const team = await teamWithPlans();
  const a = await createContact(p, team, { email: 'a@x.test', properties: { plan: 'pro' } });
  const b = await createContact(p, team, { email: 'b@x.test', properties: { plan: 'free' } });
  const c = await createContact(p, team, { email: 'c@x.test', properties: { plan: 'pro' } });
  await createContact(p, team, { email: 'd@x.test' });
  const id = await filterSegment(p, team, pro, 'Pro and friends');
  // b by hand (no match), a by hand and by the filter.
  for (const contact of [b, a])
    t.is((await p.request('POST', `/contacts/${contact}/segments/${id}`, { key: team.key })).status, 201);
  t.deepEqual(await members(p, team, id), { count: 3, emails: ['c@x.test', 'b@x.test', 'a@x.test'] });
  const listed = async (path: string) =>
    (await p.request('GET', path, { key: team.key })).body.data.map((x: { id: string }) => x.id);
  t.deepEqual(await listed(`/contacts?segment_id=${id}`), [c, b, a]);
  t.deepEqual(await listed(`/contacts?audience_id=${id}`), [c, b, a]);
  t.deepEqual(await listed(`/audiences/${id}/contacts`), [c, b, a]);
  // A member by the filter only is a contact of the audience; a non-member is not.
  t.like((await p.request('GET', `/audiences/${id}/contacts/c@x.test`, { key: team.key })).body, { id: c });
  isError(t, await p.request('GET', `/audiences/${id}/contacts/d@x.test`, { key: team.key }), 404, 'not_found');

  // A contact that changes joins or leaves at once; a hand member stays whatever it changes.
  await p.request('PATCH', '/contacts/d@x.test', { key: team.key, body: { properties: { plan: 'pro' } } });
  await p.request('PATCH', `/contacts/${c}`, { key: team.key, body: { properties: { plan: null } } });
  await p.request('PATCH', `/contacts/${a}`, { key: team.key, body: { properties: { plan: 'free' } } });
  t.deepEqual(await members(p, team, id), { count: 3, emails: ['d@x.test', 'b@x.test', 'a@x.test'] });
  // Removing a's hand membership leaves it out now that it no longer matches.
  await p.request('DELETE', `/contacts/${a}/segments/${id}`, { key: team.key });
  t.deepEqual((await members(p, team, id)).emails, ['d@x.test', 'b@x.test']);

  // A new filter replaces the old; null leaves the hand members only.
  const replaced = await p.request('PATCH', `/segments/${id}`, {
    key: team.key,
    body: { filter: { field: 'email', operator: 'starts_with', value: 'c' } },
  });
  t.deepEqual(replaced.body, { object: 'segment', id });
  t.deepEqual((await members(p, team, id)).emails, ['c@x.test', 'b@x.test']);
  t.is((await p.request('PATCH', `/segments/${id}`, { key: team.key, body: { filter: null } })).status, 200);
  t.like((await p.request('GET', `/segments/${id}`, { key: team.key })).body, { filter: null, count: 1 });
  t.deepEqual((await members(p, team, id)).emails, ['b@x.test']);
});

test('a filter segment of 26 members in pages of 10: after, before, has_more; membersAfter walks them in id order', async (t) => {
  const team = await teamWithPlans();
  const ids: string[] = [];
  for (let i = 0; i < 30; i++)
    ids.push(
      await createContact(p, team, {
        email: `user${String(i).padStart(2, '0')}@x.test`,
        properties: { plan: i % 5 === 4 ? 'free' : 'pro' },
      }),
    );
  const id = await filterSegment(p, team, pro);
  // Three hand members among the free ones (4 and 9), and one that matches anyway (0).
  for (const i of [4, 9, 0]) await p.request('POST', `/contacts/${ids[i]}/segments/${id}`, { key: team.key });
  const expected = ids.filter((_, i) => i % 5 !== 4 || i === 4 || i === 9).reverse();
  t.is(expected.length, 26);
  t.is((await p.request('GET', `/segments/${id}`, { key: team.key })).body.count, 26);

  const page = async (query: string) =>
    (await p.request('GET', `/segments/${id}/contacts?${query}`, { key: team.key })).body;
  const first = await page('limit=10');
  t.deepEqual(
    first.data.map((c: { id: string }) => c.id),
    expected.slice(0, 10),
  );
  t.true(first.has_more);
  const second = await page(`limit=10&after=${expected[9]}`);
  t.deepEqual(
    second.data.map((c: { id: string }) => c.id),
    expected.slice(10, 20),
  );
  const third = await page(`limit=10&after=${expected[19]}`);
  t.deepEqual(
    third.data.map((c: { id: string }) => c.id),
    expected.slice(20),
  );
  t.false(third.has_more);
  const back = await page(`limit=10&before=${expected[20]}`);
  t.deepEqual(
    back.data.map((c: { id: string }) => c.id),
    expected.slice(10, 20),
  );
  t.true(back.has_more);
  const top = await page(`limit=10&before=${expected[5]}`);
  t.deepEqual(
    top.data.map((c: { id: string }) => c.id),
    expected.slice(0, 5),
  );
  t.false(top.has_more);

  // What another area (a broadcast) uses: pages in id order, each after the last id of the one before.
  const segment = (await getSegment(p.db, team.id, id))!;
  const walked: string[] = [];
  let after: string | undefined;
  for (;;) {
    const rows = await membersAfter(p.db, segment, { after, limit: 7 });
    walked.push(...rows.map((r) => r.id));
    if (rows.length < 7) break;
    after = rows.at(-1)!.id;
  }
  t.deepEqual(walked, [...expected].reverse());
  // Another team's contacts never appear, whatever they match.
  const other = await teamWithPlans();
  await createContact(p, other, { email: 'theirs@x.test', properties: { plan: 'pro' } });
  t.is((await membersAfter(p.db, segment, { limit: 100 })).length, 26);
});

test('the official SDK: segments.create passes a filter through; get, list, contacts.list({segmentId}), update, remove', async (t) => {
  const team = await teamWithPlans();
  const resend = new Resend(team.key, { baseUrl: p.url } as never);
  for (let i = 0; i < 3; i++)
    await resend.contacts.create({ email: `sdk${i}@x.test`, properties: { plan: i === 1 ? 'free' : 'pro' } });
  const made = await resend.segments.create({ name: 'Pro', filter: pro } as never);
  t.is(made.error, null, JSON.stringify(made.error));
  const id = made.data!.id;
  const got = await resend.segments.get(id);
  t.like(got.data, { object: 'segment', id, name: 'Pro', filter: pro, count: 2 } as never);
  t.deepEqual(
    (await resend.segments.list()).data?.data.map((s) => s.id),
    [id],
  );
  const firstPage = await resend.contacts.list({ segmentId: id, limit: 1 });
  t.like(firstPage.data, { has_more: true, data: [{ email: 'sdk2@x.test' }] });
  const next = await resend.contacts.list({ segmentId: id, limit: 1, after: firstPage.data!.data[0].id });
  t.like(next.data, { has_more: false, data: [{ email: 'sdk0@x.test' }] });
  t.like((await resend.segments.update(id, { name: 'Paying' })).data, { object: 'segment', id });
  t.like((await resend.segments.get(id)).data, { name: 'Paying', filter: pro, count: 2 } as never);
  // A bad filter comes back as the SDK's error, naming the field.
  const bad = await resend.segments.create({
    name: 'Bad',
    filter: { all: [{ field: 'property', key: 'nope', operator: 'is_set' }] },
  } as never);
  t.like(bad.error, { name: 'validation_error', statusCode: 422 });
  t.regex((bad.error as { message: string }).message, /filter\.all\.0\.key/);
  t.like((await resend.segments.remove(id)).data, { deleted: true });
  t.like((await resend.segments.get(id)).error, { statusCode: 404 });
});

test('a segment by hand only pages the same way: newest first, after and before, has_more', async (t) => {
  const team = await teamWithPlans();
  const segment = (await p.request('POST', '/segments', { key: team.key, body: { name: 'Hand' } })).body.id;
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) ids.push(await createContact(p, team, { email: `h${i}@x.test`, segments: [segment] }));
  await createContact(p, team, { email: 'outside@x.test' });
  const newest = [...ids].reverse();
  const page = async (query: string) =>
    (await p.request('GET', `/segments/${segment}/contacts?${query}`, { key: team.key })).body;
  const first = await page('limit=3');
  t.deepEqual(
    first.data.map((c: { id: string }) => c.id),
    newest.slice(0, 3),
  );
  t.true(first.has_more);
  const last = await page(`limit=3&after=${newest[5]}`);
  t.deepEqual(
    last.data.map((c: { id: string }) => c.id),
    newest.slice(6),
  );
  t.false(last.has_more);
  const back = await page(`limit=3&before=${newest[3]}`);
  t.deepEqual(
    back.data.map((c: { id: string }) => c.id),
    newest.slice(0, 3),
  );
  t.false(back.has_more);
  t.is((await p.request('GET', `/segments/${segment}`, { key: team.key })).body.count, 7);
  const rows = await membersAfter(p.db, (await getSegment(p.db, team.id, segment))!, { after: ids[4], limit: 10 });
  t.deepEqual(
    rows.map((r) => r.id),
    ids.slice(5),
  );
});
