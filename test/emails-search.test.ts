// GET /emails `search` (issue #22: the dashboard's emails list searches through the api): the semantics the spec
// gives GET /emails/receiving's search, on sent emails: a case-insensitive substring of the subject, the sender's
// address or name, or any recipient (to, cc, bcc); `%` and `_` literal; 1-200 characters; the team's emails only;
// paged with the list's cursors; declared in the operation, so the OpenAPI document and the MCP tool carry it.
import test from 'ava';
import { isError } from './helpers/http.ts';
import { managedDomain, startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { operations } from '../api/routes/index.ts';
import { buildTools } from '../api/mcp/tools.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(() => p?.close());

const sim = (local: string) => `${local}@${p.config.SIMULATOR_DOMAIN}`;

/** A send from the team's managed domain, held an hour (no mta here): its id. */
async function send(team: TestTeam, body: Record<string, unknown>): Promise<string> {
  const managed = (await managedDomain(p, team)).name;
  const res = await p.request('POST', '/emails', {
    key: team.key,
    body: {
      from: `hello@${managed}`,
      to: sim('delivered'),
      subject: 'Hello',
      text: 'x',
      scheduled_at: 'in 1 hour',
      ...body,
    },
  });
  if (res.status !== 200) throw new Error(`POST /emails answered ${res.status} ${res.text}`);
  return res.body.id;
}

test('search: subject, sender name or address, any recipient, any case; % and _ literal; paged; the team only', async (t) => {
  const team = await p.createTeam();
  const other = await p.createTeam();
  const managed = (await managedDomain(p, team)).name;
  const invoice = await send(team, {
    from: `Carol Jones <carol@${managed}>`,
    to: `Billing Desk <${sim('delivered+billing')}>`,
    subject: 'Invoice 100% paid',
  });
  const underscore = await send(team, {
    from: `dave@${managed}`,
    to: sim('delivered+sales'),
    cc: [`Eve Watcher <${sim('delivered+eve')}>`],
    subject: 'order_42 shipped',
  });
  const blind = await send(team, { to: sim('delivered+someone'), bcc: [sim('delivered+secret-desk')] });
  // Another team's email matches every search below that finds the invoice: it is never listed.
  await send(other, { subject: 'Invoice 100% paid', to: sim('delivered+billing') });

  const search = async (q: string) => {
    const res = await p.request('GET', `/emails?search=${encodeURIComponent(q)}`, { key: team.key });
    t.is(res.status, 200, res.text);
    return (res.body.data as { id: string }[]).map((e) => e.id).sort();
  };
  t.deepEqual(await search('INVOICE'), [invoice], 'subject, any case');
  t.deepEqual(await search('carol jones'), [invoice], 'sender name');
  t.deepEqual(await search(`CAROL@${managed}`), [invoice], 'sender address');
  t.deepEqual(await search('billing desk'), [invoice], 'a To recipient by name');
  t.deepEqual(await search('delivered+billing@'), [invoice], 'a To recipient by address');
  t.deepEqual(await search('eve watcher'), [underscore], 'a Cc recipient');
  t.deepEqual(await search('SECRET-DESK'), [blind], 'a Bcc recipient');
  t.deepEqual(await search('100%'), [invoice], '% literal');
  t.deepEqual(await search('%'), [invoice], 'a lone % matches only a %');
  t.deepEqual(await search('_'), [underscore], '_ matches only an underscore');
  t.deepEqual(await search('order_4'), [underscore]);
  t.deepEqual(await search('order 4'), []);
  t.deepEqual(await search('ord%42'), [], '% is no wildcard');
  t.deepEqual(await search('\\'), [], 'the escape character itself is literal');
  t.deepEqual(await search('nothing like it'), []);
  t.deepEqual(await search(p.config.SIMULATOR_DOMAIN), [blind, invoice, underscore].sort());

  // The search composes with the cursors: newest first, one at a time, forwards and back.
  const page = async (q: string) => {
    const res = await p.request('GET', `/emails?search=${encodeURIComponent(p.config.SIMULATOR_DOMAIN)}&limit=1${q}`, {
      key: team.key,
    });
    t.is(res.status, 200, res.text);
    return { has_more: res.body.has_more as boolean, ids: (res.body.data as { id: string }[]).map((e) => e.id) };
  };
  t.deepEqual(await page(''), { has_more: true, ids: [blind] });
  t.deepEqual(await page(`&after=${blind}`), { has_more: true, ids: [underscore] });
  t.deepEqual(await page(`&after=${underscore}`), { has_more: false, ids: [invoice] });
  t.deepEqual(await page(`&before=${invoice}`), { has_more: true, ids: [underscore] });
});

test('bad input: an empty search or one of 201 characters is 422 naming `search`; 200 is fine', async (t) => {
  const team = await p.createTeam();
  for (const q of ['', 'a'.repeat(201)]) {
    const res = await p.request('GET', `/emails?search=${q}`, { key: team.key });
    isError(t, res, 422, 'validation_error');
    t.deepEqual(
      (res.body.errors as { path: string }[]).map((e) => e.path),
      ['search'],
      `${q.length} characters`,
    );
  }
  const fine = await p.request('GET', `/emails?search=${'a'.repeat(200)}`, { key: team.key });
  t.is(fine.status, 200, fine.text);
  t.deepEqual(fine.body.data, []);
});

test('declared once: the OpenAPI document and the MCP tool listEmails both carry `search`', async (t) => {
  const doc = (await p.request('GET', '/openapi.json')).body;
  const param = doc.paths['/emails'].get.parameters.find((x: { name: string }) => x.name === 'search');
  t.like(param, { in: 'query', required: false, schema: { type: 'string', minLength: 1, maxLength: 200 } });
  const received = doc.paths['/emails/receiving'].get.parameters.find((x: { name: string }) => x.name === 'search');
  t.is(param.description ?? param.schema.description, received.description ?? received.schema.description);
  const tool = buildTools(operations).find((x) => x.name === 'listEmails')!;
  const query = (tool.inputSchema.properties as Record<string, { properties: Record<string, unknown> }>).query;
  t.like(query.properties.search, { type: 'string', minLength: 1, maxLength: 200 });
});
