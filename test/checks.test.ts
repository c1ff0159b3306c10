// Pre-send checks: every code's rule on drafts through POST /emails/checks (a table: content → the statuses of one
// code), a template's checks with sample values and block ids, and the campaign refusal: a send under a topic is
// refused 422 with details.checks while a check fails, unless acknowledge_checks is true; other sends never run them.
import test from 'ava';
import { startSendingWorld, sendingTeam, type SendingTeam, type SendingWorld } from './helpers/sending.ts';

let w: SendingWorld;
let team: SendingTeam;
let topic: string;
test.before(async () => {
  w = await startSendingWorld(['checks-inbox.test']);
  team = await sendingTeam(w.p, w.dns);
  topic = (
    await w.p.request('POST', '/topics', { key: team.key, body: { name: 'News', default_subscription: 'opt_in' } })
  ).body.id;
});
test.after.always(async () => {
  await w?.close();
});

type Check = { code: string; status: string; title: string; message: string; block_id?: string };

const words =
  'Our June collection is here, with twelve new pieces made in small batches by the people who design them.';
const good = {
  subject: 'June news from the shop',
  html: `<div style="display:none;max-height:0">Twelve new pieces, made in small batches</div><p>${words}</p><img src="https://shop.test/a.png" alt="The collection"><a href="https://shop.test/june">See it</a><p><a href="https://shop.test/unsubscribe">Unsubscribe</a></p>`,
};

async function checks(body: Record<string, unknown>): Promise<Check[]> {
  const res = await w.p.request('POST', '/emails/checks', { key: team.key, body });
  if (res.status !== 200) throw new Error(`POST /emails/checks: ${res.status} ${res.text}`);
  for (const c of res.body.checks)
    if (!c.title || !c.message) throw new Error(`finding without title or message: ${JSON.stringify(c)}`);
  return res.body.checks;
}
const statuses = (all: Check[], code: string) => all.filter((c) => c.code === code).map((c) => c.status);

test('a clean draft passes every check, each code answered once', async (t) => {
  const all = await checks(good);
  t.deepEqual(
    all.map((c) => [c.code, c.status]),
    [
      ['unresolved_variable', 'pass'],
      ['links', 'pass'],
      ['link_scheme', 'pass'],
      ['subject', 'pass'],
      ['preheader', 'pass'],
      ['alt_text', 'pass'],
      ['image_weight', 'pass'],
      ['text_ratio', 'pass'],
      ['unsubscribe', 'pass'],
    ],
  );
  t.regex(all.find((c) => c.code === 'preheader')!.message, /Twelve new pieces, made in small batches/);
});

test('the checks table: each rule and its thresholds', async (t) => {
  const withHtml = (extra: string) => ({ ...good, html: good.html + extra });
  const table: [string, Record<string, unknown>, string[]][] = [
    ['unresolved_variable', withHtml('<p>Hi {{{FIRST_NAME}}}</p>'), ['fail']],
    ['unresolved_variable', { ...good, subject: 'Hi {{name}}' }, ['fail']],
    ['unresolved_variable', withHtml('<a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Leave</a>'), ['pass']],
    ['links', withHtml('<a href="/relative">x</a>'), ['fail']],
    ['links', withHtml('<a href="https://exa mple.test/">x</a>'), ['fail']],
    ['links', withHtml('<a href="https://localhostx/">x</a>'), ['fail']],
    ['links', withHtml('<a href="mailto:nobody">x</a>'), ['fail']],
    ['links', withHtml('<a href="#">x</a>'), ['warn']],
    ['link_scheme', withHtml('<a href="javascript:alert(1)">x</a>'), ['fail']],
    ['link_scheme', withHtml('<a href=" JavaScript:alert(1)">x</a>'), ['fail']],
    ['link_scheme', withHtml('<a href="data:text/html,hi">x</a>'), ['fail']],
    ['link_scheme', withHtml('<a href="vbscript:x">x</a>'), ['fail']],
    ['link_scheme', withHtml('<a href="http://shop.test/">x</a>'), ['warn']],
    ['link_scheme', withHtml('<a href="mailto:help@shop.test">x</a><a href="tel:+123">x</a>'), ['pass']],
    ['subject', { ...good, subject: '' }, ['fail']],
    ['subject', { ...good, subject: 'x'.repeat(79) }, ['warn']],
    ['subject', { ...good, subject: 'HUGE SALE TODAY ONLY' }, ['warn']],
    ['subject', { ...good, subject: 'Sale!!!' }, ['warn']],
    ['preheader', { ...good, html: `<img src="https://shop.test/a.png" alt="x">` }, ['warn']],
    ['preheader', { ...good, html: `<p>${good.subject}</p>` }, ['warn']],
    ['preheader', { ...good, html: '<p>Short one</p>' }, ['warn']],
    ['preheader', { ...good, html: `<div style="display:none">${'p'.repeat(151)}</div><p>${words}</p>` }, ['warn']],
    ['preheader', { subject: 'Plain', text: words }, ['pass']],
    ['alt_text', withHtml('<img src="https://shop.test/b.png">'), ['warn']],
    ['alt_text', withHtml('<a href="https://shop.test/"><img src="https://shop.test/c.png" alt=""></a>'), ['warn']],
    ['alt_text', withHtml('<img src="https://shop.test/spacer.gif" alt="">'), ['pass']],
    ['image_weight', withHtml(`<img alt="x" src="data:image/png;base64,${'A'.repeat(400)}">`), ['warn']],
    ['text_ratio', { ...good, html: '<img src="https://shop.test/a.png" alt="Sale">' }, ['fail']],
    [
      'text_ratio',
      { ...good, html: `<p>${words}</p>` + '<img src="https://shop.test/a.png" alt="a">'.repeat(3) },
      ['warn'],
    ],
    ['text_ratio', { subject: 'Plain', text: 'Only text' }, ['pass']],
    ['unsubscribe', { ...good, html: `<p>${words}</p>` }, ['fail']],
    [
      'unsubscribe',
      { ...good, html: `<p>${words}</p>`, headers: { 'List-Unsubscribe': '<https://shop.test/u>' } },
      ['warn'],
    ],
    ['unsubscribe', { ...good, html: `<p>${words}</p>`, topic_id: null }, ['fail']],
    ['unsubscribe', { subject: 'Plain', text: `${words}\nUnsubscribe: https://shop.test/u` }, ['pass']],
  ];
  for (const [code, body, expected] of table) {
    const got = statuses(await checks(body), code);
    t.deepEqual(got, expected, `${code}: ${JSON.stringify(body).slice(0, 160)}`);
  }
  const underTopic = await checks({ ...good, html: `<p>${words}</p>`, topic_id: topic });
  t.deepEqual(statuses(underTopic, 'unsubscribe'), ['warn'], 'a topic send carries List-Unsubscribe');
  const unknownTopic = await w.p.request('POST', '/emails/checks', {
    key: team.key,
    body: { ...good, topic_id: 'nope' },
  });
  t.like(unknownTopic.body, { statusCode: 422, errors: [{ path: 'topic_id' }] });
});

const blockTemplate = {
  name: 'Campaign',
  subject: 'Hello {{{NAME}}}',
  variables: [
    { key: 'NAME', type: 'string' },
    { key: 'URL', type: 'string', fallback_value: 'https://shop.test/june' },
  ],
  document: {
    preheader: 'Twelve new pieces, made in small batches',
    blocks: [
      { id: 'hero', type: 'image', src: 'https://shop.test/hero.png' },
      { id: 'intro', type: 'text', text: words },
      { id: 'cta', type: 'button', text: 'See it', href: '{{{URL}}}' },
      { id: 'foot', type: 'footer', text: 'Shop, 1 Main St' },
    ],
  },
};

test("a template's checks: rendered with sample values, findings name their block; a missing value is a failure", async (t) => {
  const id = (
    await w.p.request('POST', '/templates', { key: team.key, body: { ...blockTemplate, from: `news@${team.domain}` } })
  ).body.id;
  const run = (body: object) => w.p.request('POST', `/templates/${id}/checks`, { key: team.key, body });
  const bare = await run({});
  t.is(bare.status, 200, bare.text);
  t.is(bare.body.status, 'fail');
  t.like(
    bare.body.checks.find((c: Check) => c.code === 'unresolved_variable'),
    { status: 'fail', message: '`NAME` has no value and no fallback: a send must give it.' },
  );
  t.like(
    bare.body.checks.find((c: Check) => c.code === 'alt_text'),
    { status: 'warn', block_id: 'hero' },
  );
  t.deepEqual(statuses(bare.body.checks, 'unsubscribe'), ['pass'], 'the footer block has the link');
  const hostile = await run({ variables: { NAME: 'Ann', URL: 'javascript:alert(1)' } });
  t.like(
    hostile.body.checks.find((c: Check) => c.code === 'link_scheme'),
    { status: 'fail', block_id: 'cta' },
  );
  t.deepEqual(statuses(hostile.body.checks, 'unresolved_variable'), ['pass']);
  const wrong = await run({ variables: { NAME: 5 } });
  t.like(wrong.body, { statusCode: 422, errors: [{ path: 'variables.NAME' }] });
  const published = await run({ version: 'published' });
  t.like(published.body, { statusCode: 422, errors: [{ path: 'version' }] });
  const other = await w.p.createTeam('Other');
  t.is((await w.p.request('POST', `/templates/${id}/checks`, { key: other.key, body: {} })).status, 404);
});

test('a campaign send is refused while a check fails, unless it acknowledges them; a transactional send never runs them', async (t) => {
  // The other tests of the file send in this team at the same time: only this test's subject is counted.
  const count = async () =>
    Number((await w.p.db('emails').where({ team_id: team.id, subject: 'June' }).count({ n: '*' }))[0].n);
  const before = await count();
  const body = {
    from: `news@${team.domain}`,
    to: 'ann@checks-inbox.test',
    subject: 'June',
    html: `<p>${words}</p><a href="javascript:alert(1)">See it</a>`,
  };
  const refused = await w.p.request('POST', '/emails', { key: team.key, body: { ...body, topic_id: topic } });
  t.is(refused.status, 422, refused.text);
  t.is(refused.body.name, 'validation_error');
  t.regex(refused.body.message, /fails pre-send checks \(link_scheme\).*acknowledge_checks: true/);
  const found = refused.body.details.checks as Check[];
  t.deepEqual(statuses(found, 'link_scheme'), ['fail']);
  t.deepEqual(statuses(found, 'unsubscribe'), ['warn'], 'the topic send carries List-Unsubscribe');
  t.is(found.length >= 9, true);
  t.is(await count(), before, 'nothing written');

  const batch = await w.p.request('POST', '/emails/batch', { key: team.key, body: [{ ...body, topic_id: topic }] });
  t.like(batch.body, { statusCode: 422, details: { index: 0 } });
  t.truthy(batch.body.details.checks);

  const acknowledged = await w.p.request('POST', '/emails', {
    key: team.key,
    body: { ...body, topic_id: topic, acknowledge_checks: true },
  });
  t.is(acknowledged.status, 200, acknowledged.text);
  const transactional = await w.p.request('POST', '/emails', { key: team.key, body });
  t.is(transactional.status, 200, transactional.text);
  t.is(await count(), before + 2);
});

test('a campaign send of a block template: the refusal names the block, and acknowledge_checks sends it', async (t) => {
  const id = (
    await w.p.request('POST', '/templates', {
      key: team.key,
      body: { ...blockTemplate, name: 'Campaign 2', from: `news@${team.domain}` },
    })
  ).body.id;
  await w.p.request('POST', `/templates/${id}/publish`, { key: team.key });
  const send = (extra: object) =>
    w.p.request('POST', '/emails', {
      key: team.key,
      body: {
        to: 'bo@checks-inbox.test',
        topic_id: topic,
        template: { id, variables: { NAME: 'Bo', URL: 'javascript:alert(1)' } },
        ...extra,
      },
    });
  const refused = await send({});
  t.is(refused.status, 422, refused.text);
  t.like(
    (refused.body.details.checks as Check[]).find((c) => c.code === 'link_scheme'),
    { status: 'fail', block_id: 'cta' },
  );
  t.is((await send({ acknowledge_checks: true })).status, 200);
});
