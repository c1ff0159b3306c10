// Templates through the official `resend` SDK (create, get, list, update, publish, duplicate, remove, and the
// chained create().publish()), and what the API adds: aliases unique per team, typed variables with fallbacks,
// versions (publish freezes the draft; has_unpublished_versions says when the draft is ahead), and every write
// checked whole, refusing with the field, line and column and writing nothing.
import test from 'ava';
import { Resend } from 'resend';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';

let p: Platform;
let team: TestTeam;
let resend: Resend;
test.before(async () => {
  p = await startPlatform();
  team = await p.createTeam();
  resend = new Resend(team.key, { baseUrl: p.url } as never);
});
test.after.always(async () => {
  await p?.close();
});

const html = '<p>Hello {{{NAME|there}}}, your total is {{{PRICE}}}.</p>';

test('the SDK: create, get, list, update, publish, duplicate and remove, by id and by alias', async (t) => {
  const created = await resend.templates.create({
    name: 'Order confirmation',
    alias: 'order-confirmation',
    subject: 'Order {{{ORDER_ID}}}',
    from: 'Shop <shop@example.com>',
    replyTo: 'help@example.com',
    html,
    variables: [
      { key: 'NAME', type: 'string', fallbackValue: 'friend' },
      { key: 'PRICE', type: 'number' },
      { key: 'ORDER_ID', type: 'string', fallbackValue: 'n/a' },
    ],
  });
  t.is(created.error, null, JSON.stringify(created.error));
  const id = created.data!.id;
  t.like(created.data, { object: 'template' });

  const got = await resend.templates.get('order-confirmation');
  t.is(got.error, null);
  t.like(got.data, {
    object: 'template',
    id,
    name: 'Order confirmation',
    alias: 'order-confirmation',
    subject: 'Order {{{ORDER_ID}}}',
    from: 'Shop <shop@example.com>',
    reply_to: ['help@example.com'],
    html,
    text: null,
    status: 'draft',
    published_at: null,
    has_unpublished_versions: true,
  });
  t.deepEqual(
    got.data!.variables!.map((v) => [v.key, v.type, v.fallback_value]),
    [
      ['NAME', 'string', 'friend'],
      ['PRICE', 'number', null],
      ['ORDER_ID', 'string', 'n/a'],
    ],
  );

  const published = await resend.templates.publish(id);
  t.deepEqual(published.data, { object: 'template', id });
  const after = (await resend.templates.get(id)).data!;
  t.like(after, { status: 'published', has_unpublished_versions: false });
  t.truthy(after.published_at);

  const updated = await resend.templates.update(id, { subject: 'Your order {{{ORDER_ID}}}' });
  t.deepEqual(updated.data, { object: 'template', id });
  const draft = (await resend.templates.get(id)).data!;
  t.like(draft, { subject: 'Your order {{{ORDER_ID}}}', status: 'published', has_unpublished_versions: true });
  t.not(draft.current_version_id, after.current_version_id, 'a change of content is a new version');

  const list = await resend.templates.list({ limit: 10 });
  t.is(list.error, null);
  t.like(
    list.data!.data.find((i) => i.id === id),
    { name: 'Order confirmation', alias: 'order-confirmation', status: 'published' },
  );

  const copy = await resend.templates.duplicate('order-confirmation');
  t.is(copy.error, null);
  const duplicate = (await resend.templates.get(copy.data!.id)).data!;
  t.like(duplicate, {
    name: 'Order confirmation (copy)',
    alias: null,
    status: 'draft',
    subject: 'Your order {{{ORDER_ID}}}',
  });

  const chained = await resend.templates.create({ name: 'Chained', html: '<p>hi</p>' }).publish();
  t.is(chained.error, null, JSON.stringify(chained.error));
  t.is((await resend.templates.get(chained.data!.id)).data!.status, 'published');

  const removed = await resend.templates.remove(id);
  t.deepEqual(removed.data, { object: 'template', id, deleted: true });
  t.like((await resend.templates.get(id)).error, { name: 'not_found', statusCode: 404 });
  t.is(
    await p
      .db('template_versions')
      .where({ template_id: id })
      .count({ n: '*' })
      .then((r) => Number(r[0].n)),
    0,
  );
});

test('publish freezes a version: versions are numbered and immutable, an unchanged draft publishes nothing new', async (t) => {
  const res = await p.request('POST', '/templates', { key: team.key, body: { name: 'Versions', html: '<p>one</p>' } });
  t.is(res.status, 201, res.text);
  const id = res.body.id;
  const publish = () => p.request('POST', `/templates/${id}/publish`, { key: team.key });
  t.is((await publish()).status, 200);
  t.is((await publish()).status, 200, 'publishing again with no change');
  await p.request('PATCH', `/templates/${id}`, { key: team.key, body: { html: '<p>two</p>' } });
  t.is((await publish()).status, 200);
  const versions = await p.db('template_versions').where({ template_id: id }).orderBy('number');
  t.deepEqual(
    versions.map((v) => [v.number, v.html]),
    [
      [1, '<p>one</p>'],
      [2, '<p>two</p>'],
    ],
  );
  const row = await p.db('templates').where({ id }).first();
  t.is(row.published_version_id, versions[1].id);
  const err = await t.throwsAsync(p.db('template_versions').where({ id: versions[0].id }).update({ html: 'changed' }));
  t.regex(err!.message, /template versions are immutable/);
  // A rename is not content: no new version is due.
  await p.request('PATCH', `/templates/${id}`, { key: team.key, body: { name: 'Versions renamed' } });
  t.false((await p.request('GET', `/templates/${id}`, { key: team.key })).body.has_unpublished_versions);
});

test('aliases are unique in a team, never look like an id, and another team cannot reach the template', async (t) => {
  const make = (body: object, key = team.key) =>
    p.request('POST', '/templates', { key, body: { name: 'A', html: 'x', ...body } });
  t.is((await make({ alias: 'welcome' })).status, 201);
  const taken = await make({ alias: 'welcome' });
  t.is(taken.status, 422);
  t.like(taken.body, { name: 'validation_error', errors: [{ path: 'alias' }] });
  const uuidLike = await make({ alias: '0190a6b2-1111-7222-8333-944445555666' });
  t.like(uuidLike.body, { statusCode: 422, errors: [{ path: 'alias' }] });
  const other = await p.createTeam('Other');
  t.is((await make({ alias: 'welcome' }, other.key)).status, 201, 'the same alias in another team');
  const mine = (await p.request('GET', '/templates/welcome', { key: team.key })).body.id;
  for (const [method, path] of [
    ['GET', `/templates/${mine}`],
    ['PATCH', `/templates/${mine}`],
    ['POST', `/templates/${mine}/publish`],
    ['POST', `/templates/${mine}/duplicate`],
    ['DELETE', `/templates/${mine}`],
  ]) {
    const res = await p.request(method, path, { key: other.key, body: method === 'PATCH' ? { name: 'x' } : undefined });
    t.is(res.status, 404, `${method} ${path}`);
  }
  t.is((await p.request('GET', '/templates/welcome', { key: other.key })).body.id !== mine, true);
  t.is((await p.request('GET', `/templates/${mine}`, { key: team.key })).body.name, 'A');
});

test('typed variables: keys, reserved names, fallbacks of the declared type; objects and lists are read by field', async (t) => {
  const make = (body: object) => p.request('POST', '/templates', { key: team.key, body: { name: 'V', ...body } });
  const cases: [object, string][] = [
    [{ html: 'x', variables: [{ key: '1BAD', type: 'string' }] }, 'variables.0.key'],
    [{ html: 'x', variables: [{ key: 'EMAIL', type: 'string' }] }, 'variables.0.key'],
    [{ html: 'x', variables: [{ key: 'raw', type: 'string' }] }, 'variables.0.key'],
    [
      {
        html: 'x',
        variables: [
          { key: 'A', type: 'string' },
          { key: 'A', type: 'number' },
        ],
      },
      'variables.1.key',
    ],
    [{ html: 'x', variables: [{ key: 'N', type: 'number', fallback_value: 'ten' }] }, 'variables.0.fallback_value'],
    [{ html: 'x', variables: [{ key: 'L', type: 'list', fallback_value: { a: 1 } }] }, 'variables.0.fallback_value'],
    [{ html: 'x', variables: [{ key: 'T', type: 'date' }] }, 'variables.0.type'],
    [{ html: '{{ORDER}}', variables: [{ key: 'ORDER', type: 'object' }] }, 'html'],
    [{ html: '{{ITEMS}}', variables: [{ key: 'ITEMS', type: 'list' }] }, 'html'],
    [{ html: '{{NAME.first}}', variables: [{ key: 'NAME', type: 'string' }] }, 'html'],
    [{ html: 'Hi {{{NAME}}}' }, 'html'],
    [{ html: 'x', subject: 'Hi {{{WHO}}}' }, 'subject'],
    [{ html: 'x', text: 'Hi {{{WHO}}}' }, 'text'],
  ];
  for (const [body, path] of cases) {
    const res = await make(body);
    t.is(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
    t.is(res.body.errors?.[0]?.path, path, JSON.stringify(body));
  }
  const ok = await make({
    html: '{{#each ITEMS}}<li>{{name}}: {{price}}</li>{{/each}} {{ORDER.total}} {{#if VIP}}VIP{{/if}}',
    variables: [
      { key: 'ITEMS', type: 'list', fallback_value: [] },
      { key: 'ORDER', type: 'object', fallback_value: { total: 0 } },
      { key: 'VIP', type: 'boolean', fallback_value: false },
    ],
  });
  t.is(ok.status, 201, ok.text);
});

test('syntax errors name the field, the line and the column; nothing is written', async (t) => {
  const team = await p.createTeam('Syntax');
  const before = await p.db('templates').where({ team_id: team.id }).count({ n: '*' });
  const cases: [object, string, RegExp, number, number][] = [
    [{ html: '<p>\n  {{#if VIP}}gold\n</p>' }, 'html', /is left open/, 3, 5],
    [{ html: '<p>{{#each ITEMS}}x{{/if}}</p>' }, 'html', /\{\{#each\}\} is closed by \{\{\/if\}\}/, 1, 7],
    [{ html: 'ok\n  {{shout NAME}}' }, 'html', /unknown helper `shout`/, 2, 3],
    [{ html: '{{> header}}' }, 'html', /partials/, 1, 1],
    [{ html: 'x', subject: 'Hi {{{NAME|a}}} {{{NAME}}' }, 'subject', /syntax error/, 1, 24],
    [{ html: 'x', text: 'a {{lookup NAME "x"}}' }, 'text', /unknown helper `lookup`/, 1, 3],
  ];
  for (const [body, path, message, line, column] of cases) {
    const res = await p.request('POST', '/templates', {
      key: team.key,
      body: {
        name: 'S',
        variables: [
          { key: 'NAME', type: 'string' },
          { key: 'VIP', type: 'boolean' },
          { key: 'ITEMS', type: 'list' },
        ],
        ...body,
      },
    });
    t.is(res.status, 422, res.text);
    t.is(res.body.name, 'validation_error');
    t.is(res.body.errors[0].path, path);
    t.regex(res.body.message, message);
    t.like(res.body.details, { field: path, line, column }, JSON.stringify(body));
  }
  // An update is checked the same way, and leaves the draft as it was.
  const id = (await p.request('POST', '/templates', { key: team.key, body: { name: 'U', html: '<p>fine</p>' } })).body
    .id;
  const bad = await p.request('PATCH', `/templates/${id}`, { key: team.key, body: { html: '<p>{{#if}}</p>' } });
  t.is(bad.status, 422);
  t.is((await p.request('GET', `/templates/${id}`, { key: team.key })).body.html, '<p>fine</p>');
  const after = await p.db('templates').where({ team_id: team.id }).count({ n: '*' });
  t.is(Number(after[0].n), Number(before[0].n) + 1);
});

test('create needs a name and html (or a document); the SDK is told so', async (t) => {
  const noHtml = await p.request('POST', '/templates', { key: team.key, body: { name: 'x' } });
  t.is(noHtml.status, 422);
  t.like(noHtml.body, { name: 'missing_required_field', errors: [{ path: 'html' }] });
  const noName = await resend.templates.create({ html: '<p>x</p>' } as never);
  t.like(noName.error, { statusCode: 422, name: 'missing_required_field' });
});
