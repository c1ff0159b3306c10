// POST /template-previews and GET /template-previews/{id}: unsaved template content rendered as a send would (sample
// values, fallbacks), every pre-send check on it (a block's finding names its block), nothing written; its page
// served as text/html under its own policy, to its team only; a mistake is 422 naming the field and the block, a body
// past the limit 413.
import test from 'ava';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { PREVIEW_PAGE_CSP } from '../api/routes/template-previews.ts';

let p: Platform;
let team: TestTeam;
let other: TestTeam;
test.before(async () => {
  p = await startPlatform();
  team = await p.createTeam('Previews');
  other = await p.createTeam('Another team');
});
test.after.always(async () => {
  await p?.close();
});

const document = {
  preheader: 'A preview of the week in {{{CITY}}}',
  blocks: [
    { id: 'title', type: 'heading', text: 'Hello {{{NAME}}} <b>&</b>' },
    { id: 'cta', type: 'button', text: 'Open', href: 'http://example.com/plain' },
    { id: 'foot', type: 'footer', text: 'Postwerk, 1 Main Street' },
  ],
};
const variables = [
  { key: 'NAME', type: 'string', fallback_value: null },
  { key: 'CITY', type: 'string', fallback_value: 'Berlin' },
];

test('a block document is rendered with the values and fallbacks, checked, and nothing is written', async (t) => {
  const res = await p.request('POST', '/template-previews', {
    key: team.key,
    body: { subject: 'Week in {{{CITY}}}', document, variables, values: { NAME: 'Ann' } },
  });
  t.is(res.status, 201, res.text);
  t.is(res.body.object, 'template_preview');
  t.is(res.body.subject, 'Week in Berlin');
  t.true(res.body.html.includes('Hello Ann &lt;b&gt;&amp;&lt;/b&gt;'), 'text escaped, the value filled');
  t.regex(res.body.text, /Hello Ann <b>&<\/b>/);
  const scheme = res.body.checks.find((c: { code: string; status: string }) => c.code === 'link_scheme');
  t.like(scheme, { status: 'warn', block_id: 'cta' });
  t.is(res.body.status, 'warn');
  t.is(Number((await p.db('templates').count({ n: '*' }).first())?.n), 0, 'nothing written');

  const page = await p.request('GET', `/template-previews/${res.body.id}`, { key: team.key });
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type') ?? '', /^text\/html/);
  t.is(page.headers.get('content-security-policy'), PREVIEW_PAGE_CSP);
  t.is(page.headers.get('cache-control'), 'no-store');
  t.is(page.text, res.body.html);
  const theirs = await p.request('GET', `/template-previews/${res.body.id}`, { key: other.key });
  t.is(theirs.status, 404, 'another team never sees it');
  t.is((await p.request('GET', '/template-previews/not-a-preview', { key: team.key })).status, 404);
});

test('a variable without a value or fallback is a failing check, not a refusal; html content too', async (t) => {
  const res = await p.request('POST', '/template-previews', {
    key: team.key,
    body: { subject: 'Hi', html: '<p>Hello {{{NAME}}}</p>', variables },
  });
  t.is(res.status, 201, res.text);
  t.like(
    res.body.checks.find((c: { code: string }) => c.code === 'unresolved_variable'),
    { status: 'fail' },
  );
  t.is(res.body.status, 'fail');
  t.is(res.body.text.trim(), 'Hello', 'the text part made from the html');
});

test('mistakes are 422 naming the field and the block; a body past the limit is 413', async (t) => {
  const undeclared = await p.request('POST', '/template-previews', {
    key: team.key,
    body: { document: { blocks: [{ id: 'intro', type: 'text', text: 'Hi {{{WHO}}}' }] }, variables },
  });
  t.is(undeclared.status, 422, undeclared.text);
  t.is(undeclared.body.errors[0].path, 'document.blocks.0.text');
  t.is(undeclared.body.details.block_id, 'intro');

  const scheme = await p.request('POST', '/template-previews', {
    key: team.key,
    body: { document: { blocks: [{ id: 'b', type: 'button', text: 'Go', href: 'javascript:alert(1)' }] } },
  });
  t.is(scheme.status, 422);
  t.is(scheme.body.errors[0].path, 'document.blocks.0.href');

  const nothing = await p.request('POST', '/template-previews', { key: team.key, body: { subject: 'Hi' } });
  t.is(nothing.status, 422);
  t.is(nothing.body.errors[0].path, 'html');

  const huge = 'x'.repeat(5 * 1024 * 1024);
  const big = await p.request('POST', '/template-previews', {
    key: team.key,
    body: { document: { blocks: [{ id: 'big', type: 'text', text: huge }] } },
  });
  t.is(big.status, 413);
  t.is(big.body.message, `The request body is larger than ${p.config.BODY_LIMIT_BYTES} bytes.`);
});
