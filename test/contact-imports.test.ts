// Contact imports end to end: the CSV posted to the api (the official SDK's contacts.imports and plain multipart),
// run by the real worker process (worker/main.ts), read back through the API and the database. Every column_map
// rule of the spec, on_conflict, segments and topics, the failed rows with their numbers and reasons, no contact.*
// event per row, one audit entry, and the file deleted by the maintenance seven days after the import.
import test from 'ava';
import { Resend } from 'resend';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startEntry, type EntryProcess } from './helpers/processes.ts';
import { contactEvents, createContact, createSegment, createTopic, created } from './helpers/contacts.ts';
import { contactsOf, finished, imported } from './helpers/imports.ts';
import { runMaintenance } from '../worker/maintenance.ts';
import { topicAudience } from '../shared/topics/subscriptions.ts';
import { billableCount } from '../shared/contacts/billable.ts';

let p: Platform;
let worker: EntryProcess;
test.before(async () => {
  p = await startPlatform();
  worker = startEntry('worker/main.ts', p.config);
  await worker.logged('worker.started', 60_000);
});
test.after.always(async () => {
  await worker?.stop();
  await p?.close();
});

const team = () => p.createTeam('Imports');

test('the SDK imports a CSV: 201 {object, id}, then queued → completed with its counts, listed by status', async (t) => {
  const owner = await team();
  const resend = new Resend(owner.key, { baseUrl: p.url } as never);
  const segment = await createSegment(p, owner, 'Newsletter');
  const topic = await createTopic(p, owner, { name: 'Product news', default_subscription: 'opt_out' });
  const csv = 'Mail,Given,Family\nann@example.com,Ann,Lee\nBOB@Example.COM,Bob,\n';
  const res = await resend.contacts.imports.create({
    file: new Blob([csv], { type: 'text/csv' }),
    columnMap: { email: 'Mail', firstName: 'Given', lastName: 'Family' },
    onConflict: 'skip',
    segments: [{ id: segment }],
    topics: [{ id: topic, subscription: 'opt_in' }],
  });
  t.is(res.error, null, JSON.stringify(res.error));
  t.is(res.data!.object, 'contact_import');
  const id = res.data!.id;
  const done = await finished(p, owner, id);
  t.like(done, { object: 'contact_import', id, status: 'completed' });
  t.deepEqual(done.counts, { total: 2, created: 2, updated: 0, skipped: 0, failed: 0 });
  t.truthy(Date.parse(done.completed_at) >= Date.parse(done.created_at));

  const got = await resend.contacts.imports.get(id);
  t.is(got.error, null);
  t.is(got.data!.status, 'completed');
  const completed = await resend.contacts.imports.list({ status: 'completed' });
  t.deepEqual(
    completed.data!.data.map((i) => i.id),
    [id],
  );
  t.deepEqual((await resend.contacts.imports.list({ status: 'queued' })).data!.data, []);

  const contacts = await contactsOf(p, owner.id);
  t.like(contacts.get('ann@example.com'), { first_name: 'Ann', last_name: 'Lee', unsubscribed: false });
  t.like(contacts.get('bob@example.com'), { email: 'BOB@example.com', first_name: 'Bob', last_name: null });
  const members = await p.request('GET', `/segments/${segment}/contacts`, { key: owner.key });
  t.is(members.body.data.length, 2, 'both in the segment');
  const choices = await p.db('topic_subscriptions').where({ topic_id: topic }).orderBy('email').pluck('subscription');
  t.deepEqual(choices, ['opt_in', 'opt_in']);
  t.deepEqual(await contactEvents(p, owner.id), [], 'no contact.* event per row');
  const audit = await p.db('audit_log').where({ team_id: owner.id });
  t.is(audit.length, 1, 'one audit entry for the import');
  t.like(audit[0], {
    action: 'contacts.imported',
    actor_type: 'api_key',
    subject_type: 'contact_import',
    subject_id: id,
  });
  t.like(audit[0].data, { status: 'completed', counts: done.counts, on_conflict: 'skip', segment_ids: [segment] });
});

test('column_map: full_name split at the first space, subscription_status never more subscribed than the row', async (t) => {
  const owner = await team();
  const news = await createTopic(p, owner, { name: 'News', default_subscription: 'opt_out' });
  const csv = [
    'email,name,status,unsub',
    'a@example.com,Ann Marie Lee,subscribed,',
    'b@example.com,Bo,unsubscribed,false',
    'c@example.com, Cy  Dee ,never_subscribed,',
    'd@example.com,Dee Dee,subscribed,true',
    'e@example.com,,,',
  ].join('\n');
  const { result } = await imported(p, owner, csv, {
    column_map: { email: 'email', full_name: 'name', subscription_status: 'status', unsubscribed: 'unsub' },
    topics: [{ id: news, subscription: 'opt_in' }],
  });
  t.deepEqual(result.counts, { total: 5, created: 5, updated: 0, skipped: 0, failed: 0 });
  const c = await contactsOf(p, owner.id);
  t.like(c.get('a@example.com'), { first_name: 'Ann', last_name: 'Marie Lee', unsubscribed: false });
  t.like(c.get('b@example.com'), { first_name: 'Bo', last_name: null, unsubscribed: true }, 'status wins over false');
  t.like(
    c.get('c@example.com'),
    { first_name: 'Cy', last_name: 'Dee', unsubscribed: false, never_subscribed: true },
    'never_subscribed is stored as such, not as unsubscribed',
  );
  t.false(c.get('b@example.com')!.never_subscribed);
  // And the API says so.
  const cy = await p.request('GET', '/contacts/c%40example.com', { key: owner.key });
  t.like(cy.body, { object: 'contact', unsubscribed: false, never_subscribed: true });
  t.like((await p.request('GET', '/contacts/b%40example.com', { key: owner.key })).body, { never_subscribed: false });
  t.like(c.get('d@example.com'), { unsubscribed: true }, 'unsubscribed=true wins over subscribed');
  t.like(c.get('e@example.com'), { first_name: null, last_name: null, unsubscribed: false });
  // The import's opt_in reaches only the rows that may be subscribed.
  const opted = await p
    .db('topic_subscriptions')
    .where({ topic_id: news, subscription: 'opt_in' })
    .orderBy('email')
    .pluck('email');
  t.deepEqual(opted, ['a@example.com', 'e@example.com']);
});

test('a never_subscribed contact: no topic default reaches it (nor an earlier opt_in), its own later choice does', async (t) => {
  const owner = await team();
  const before = await createTopic(p, owner, { name: 'Before', default_subscription: 'opt_in' });
  const chosen = await createTopic(p, owner, { name: 'Chosen', default_subscription: 'opt_out' });
  await imported(p, owner, 'email\nold@example.com\n');
  await p
    .db('topic_subscriptions')
    .insert({ topic_id: chosen, team_id: owner.id, email: 'old@example.com', subscription: 'opt_in' });
  const { result } = await imported(
    p,
    owner,
    'email,subscription_status\nold@example.com,never_subscribed\nnew@example.com,never_subscribed\nyes@example.com,\n',
    { on_conflict: 'upsert' },
  );
  t.deepEqual(result.counts, { total: 3, created: 2, updated: 1, skipped: 0, failed: 0 });
  const c = await contactsOf(p, owner.id);
  for (const address of ['old@example.com', 'new@example.com'])
    t.like(c.get(address), { unsubscribed: false, never_subscribed: true }, address);
  t.like(c.get('yes@example.com'), { unsubscribed: false, never_subscribed: false });
  const after = await createTopic(p, owner, { name: 'After', default_subscription: 'opt_in' });
  const addresses = ['old@example.com', 'new@example.com', 'yes@example.com'];
  const standing = async (topic: string) => {
    const audience = (await topicAudience(p.db, owner.id, topic, addresses))!;
    return addresses.map((a) => audience.standing(a));
  };
  t.deepEqual(await standing(before), ['opted_out', 'opted_out', 'subscribed'], 'a default opt_in topic');
  t.deepEqual(await standing(chosen), ['opted_out', 'opted_out', 'opted_out'], 'the earlier opt_in is undone');
  t.deepEqual(await standing(after), ['opted_out', 'opted_out', 'subscribed'], 'a topic made after the import');
  t.is(await billableCount(p.db, owner.id), 1, 'only yes@ is billable');
  // A filter segment and the contact's topics say the same.
  const segment = await p.request('POST', '/segments', {
    key: owner.key,
    body: { name: 'After', filter: { all: [{ field: 'topic', topic_id: after, operator: 'subscribed' }] } },
  });
  t.is(segment.status, 201, segment.text);
  const counted = async () =>
    (await p.request('GET', `/segments/${segment.body.id}`, { key: owner.key })).body.count as number;
  t.is(await counted(), 1);
  const topicsOf = async (address: string) =>
    (await p.request('GET', `/contacts/${address}/topics`, { key: owner.key })).body.data.find(
      (x: { id: string }) => x.id === after,
    ).subscription;
  t.is(await topicsOf('new@example.com'), 'opt_out');
  t.is(await topicsOf('yes@example.com'), 'opt_in');
  // Its own choice (the preference page, the API) opts it in.
  const res = await p.request('PATCH', '/contacts/new@example.com/topics', {
    key: owner.key,
    body: { topics: [{ id: after, subscription: 'opt_in' }] },
  });
  t.is(res.status, 200, res.text);
  t.deepEqual(await standing(after), ['opted_out', 'subscribed', 'subscribed']);
  t.is(await counted(), 2);
  t.is(await topicsOf('new@example.com'), 'opt_in');
});

test('without a column_map: the columns of the fields own names, subscription_status read too', async (t) => {
  const owner = await team();
  const csv =
    'Email,First_Name,last_name,Subscription_Status,plan\nx@example.com,Xi,Yu,unsubscribed,gold\ny@example.com,,,,\n';
  const { result } = await imported(p, owner, csv);
  t.deepEqual(result.counts, { total: 2, created: 2, updated: 0, skipped: 0, failed: 0 });
  const c = await contactsOf(p, owner.id);
  t.like(c.get('x@example.com'), { first_name: 'Xi', last_name: 'Yu', unsubscribed: true, properties: {} });
  t.like(c.get('y@example.com'), { first_name: null, unsubscribed: false });
});

test('properties: a column name or {column, type}; a value of the wrong type fails its row, naming the property', async (t) => {
  const owner = await team();
  await created(p, owner, '/contact-properties', { key: 'plan', type: 'string' });
  await created(p, owner, '/contact-properties', { key: 'seats', type: 'number' });
  await created(p, owner, '/contact-properties', { key: 'vip', type: 'boolean' });
  const csv = [
    'email,plan,seats,vip',
    "a@example.com,=cmd|' /C calc'!A0,3,yes",
    'b@example.com,+SUM(1),many,no',
    'c@example.com,@now,-2.5e1,maybe',
    'd@example.com,-1,,',
  ].join('\r\n');
  const { id, result, failures } = await imported(p, owner, csv, {
    column_map: { properties: { plan: 'plan', seats: { column: 'seats', type: 'number' }, vip: { column: 'vip' } } },
  });
  t.deepEqual(result.counts, { total: 4, created: 2, updated: 0, skipped: 0, failed: 2 });
  const c = await contactsOf(p, owner.id);
  // Spreadsheet formulas are stored as given, inert text.
  t.deepEqual(c.get('a@example.com')!.properties, { plan: "=cmd|' /C calc'!A0", seats: 3, vip: true });
  t.deepEqual(c.get('d@example.com')!.properties, { plan: '-1' });
  t.like(failures, { object: 'contact_import_failures', import_id: id, status: 'completed', failed: 2, error: null });
  t.deepEqual(
    failures.data.map((f: { row: number; email: string }) => [f.row, f.email]),
    [
      [3, 'b@example.com'],
      [4, 'c@example.com'],
    ],
  );
  t.regex(failures.data[0].reason, /property `seats`.*number/);
  t.regex(failures.data[1].reason, /property `vip`.*true or false/);
  const api = await p.request('GET', '/contacts/a@example.com', { key: owner.key });
  t.deepEqual(api.body.properties.plan, { type: 'string', value: "=cmd|' /C calc'!A0" });
});

test('on_conflict: skip leaves existing contacts, upsert updates them; an address twice in the file is one contact', async (t) => {
  const owner = await team();
  await created(p, owner, '/contact-properties', { key: 'plan', type: 'string' });
  await createContact(p, owner, { email: 'old@example.com', first_name: 'Old', properties: { plan: 'free' } });
  const csv =
    'email,first_name,last_name,plan\nOLD@example.com,New,,pro\nfresh@example.com,Fresh,One,\nfresh@example.com,,Two,gold\n';
  const column_map = { properties: { plan: 'plan' } };
  const skip = await imported(p, owner, csv, { column_map });
  t.deepEqual(skip.result.counts, { total: 3, created: 1, updated: 0, skipped: 2, failed: 0 });
  let c = await contactsOf(p, owner.id);
  t.like(c.get('old@example.com'), { first_name: 'Old', properties: { plan: 'free' } });
  t.like(c.get('fresh@example.com'), { first_name: 'Fresh', last_name: 'One', properties: {} });

  const upsert = await imported(p, owner, csv, { column_map, on_conflict: 'upsert' });
  t.deepEqual(upsert.result.counts, { total: 3, created: 0, updated: 3, skipped: 0, failed: 0 });
  c = await contactsOf(p, owner.id);
  t.like(c.get('old@example.com'), { email: 'old@example.com', first_name: 'New', last_name: null });
  t.deepEqual(c.get('old@example.com')!.properties, { plan: 'pro' });
  // The later row applied over the earlier one: its empty first_name leaves "Fresh".
  t.like(c.get('fresh@example.com'), { first_name: 'Fresh', last_name: 'Two', properties: { plan: 'gold' } });
  t.is(c.size, 2);
  t.deepEqual(await contactEvents(p, owner.id).then((e) => e.map((x) => x.type)), ['contact.created']);
});

test('rows that cannot be contacts fail alone with their row numbers; quoted newlines, BOM and mixed line endings read', async (t) => {
  const owner = await team();
  const csv =
    '\ufeffemail,first_name\r\n' +
    'good@example.com,"Multi\nLine"\n' +
    ',Nobody\r' +
    'not-an-address,X\n' +
    '\n' +
    'too@example.com,many,fields\n' +
    'ok@example.com,Ok\r\n';
  const { result, failures } = await imported(p, owner, csv);
  t.deepEqual(result.counts, { total: 5, created: 2, updated: 0, skipped: 0, failed: 3 });
  t.deepEqual(
    failures.data.map((f: { row: number }) => f.row),
    [3, 4, 5],
  );
  t.regex(failures.data[0].reason, /no address in the column `email`/);
  t.is(failures.data[1].email, 'not-an-address');
  t.regex(failures.data[1].reason, /not usable/);
  t.regex(failures.data[2].reason, /has 3 fields; the header row has 2 columns/);
  const c = await contactsOf(p, owner.id);
  t.is(c.get('good@example.com')!.first_name, 'Multi\nLine');
  t.is(c.get('ok@example.com')!.first_name, 'Ok');
});

test('the uploaded file is deleted by the maintenance seven days after the import; the import and its counts stay', async (t) => {
  const owner = await team();
  const { id, result } = await imported(p, owner, 'email\nkeep@example.com\n');
  const row = await p.db('contact_imports').where({ id }).first();
  t.truthy(await p.deps.blobs.size(row.blob_key), 'the file is stored');
  const sixDays = new Date(Date.parse(result.completed_at) + 6 * 24 * 3600_000);
  t.is((await runMaintenance(p.db, p.deps.blobs, sixDays)).contact_import_files, 0);
  const eightDays = new Date(Date.parse(result.completed_at) + 8 * 24 * 3600_000);
  t.true((await runMaintenance(p.db, p.deps.blobs, eightDays)).contact_import_files >= 1);
  t.is(await p.deps.blobs.size(row.blob_key), null, 'the file is gone');
  const after = await p.request('GET', `/contacts/imports/${id}`, { key: owner.key });
  t.deepEqual(after.body.counts, result.counts);
  t.is((await p.db('contact_imports').where({ id }).first()).blob_key, null);
});

test("another team's import is not found; a malformed id too", async (t) => {
  const [a, b] = [await team(), await team()];
  const { id } = await imported(p, a, 'email\nz@example.com\n');
  for (const path of [`/contacts/imports/${id}`, `/contacts/imports/${id}/failures`, '/contacts/imports/nope'])
    t.like(await p.request('GET', path, { key: b.key }), {
      status: 404,
      body: { name: 'not_found', message: 'Contact import not found.' },
    });
  t.deepEqual((await p.request('GET', '/contacts/imports', { key: b.key })).body.data, []);
});

test('the first 1,000 failed rows are kept with their numbers; the rest are counted', async (t) => {
  const owner = await team();
  const bad = Array.from({ length: 1_010 }, (_, i) => `broken-${i}`);
  const csv = `email\nfirst@example.com\n${bad.join('\n')}\nlast@example.com\n`;
  const { result, failures } = await imported(p, owner, csv);
  t.deepEqual(result.counts, { total: 1_012, created: 2, updated: 0, skipped: 0, failed: 1_010 });
  t.is(failures.failed, 1_010);
  t.is(failures.data.length, 1_000);
  t.deepEqual(failures.data[0], {
    row: 3,
    email: 'broken-0',
    reason: 'has an address that is not usable: it is not an email address',
  });
  t.is(failures.data[999].row, 1_002);
});
