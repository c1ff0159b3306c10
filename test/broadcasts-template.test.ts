// A broadcast made from a published template (`template_id`): the published version's subject, html, text and
// document copied in at create, the template's own variables filled, contact merge tags left for the fan-out; a
// snapshot that later template edits do not change; unpublished, deleted and other teams' templates refused.
import test from 'ava';
import { simpleParser } from 'mailparser';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { audience, created, fanOutAndDeliver, type Audience } from './helpers/broadcasts.ts';
import { unsubscribeUrl } from './helpers/topic-sends.ts';

let w: MtaWorld;
let a: Audience;
let other: Audience;
test.before(async () => {
  w = await startMtaWorld();
  w.mx('tpl-inbox.test');
  a = await audience(w, 'tpl-news.test', [{ email: 'ann@tpl-inbox.test', first_name: 'Ann' }]);
  other = await audience(w, 'tpl-other.test', []);
});
test.after.always(async () => {
  await w?.close();
});

const post = (path: string, body: unknown, key = a.team.key) => w.p.request('POST', path, { key, body });
const get = async (id: string) => (await w.p.request('GET', `/broadcasts/${id}`, { key: a.team.key })).body;

const document = {
  blocks: [
    { id: 'title', type: 'heading', text: '{{{SEASON}}} sale' },
    { id: 'intro', type: 'text', text: 'Use {{{CODE}}} at checkout.' },
    { id: 'cta', type: 'button', text: 'Shop', href: '{{{URL}}}' },
    { id: 'foot', type: 'footer', text: 'TPL News' },
  ],
};
const variables = [
  { key: 'SEASON', type: 'string' },
  { key: 'CODE', type: 'string', fallback_value: 'WELCOME' },
  { key: 'URL', type: 'string', fallback_value: 'https://tpl-news.test/shop' },
];

async function publishedTemplate(body: Record<string, unknown>, team = a): Promise<string> {
  const id = await created(w, team.team, '/templates', { from: team.from, variables, ...body });
  const res = await post(`/templates/${id}/publish`, {}, team.team.key);
  if (res.status !== 200) throw new Error(res.text);
  return id;
}

test('a broadcast made from a published document template is a filled snapshot, sent with contact merge tags', async (t) => {
  const template = await publishedTemplate({ name: 'Sale', subject: '{{{SEASON}}} sale', document });
  const id = await created(w, a.team, '/broadcasts', {
    segment_id: a.segment,
    template_id: template,
    variables: { SEASON: 'Summer' },
  });
  const got = await get(id);
  t.like(got, { template_id: template, from: a.from, subject: 'Summer sale', status: 'draft' });
  t.is(got.document.blocks[0].text, 'Summer sale');
  t.is(got.document.blocks[1].text, 'Use WELCOME at checkout.', "the variable's fallback");
  t.is(got.document.blocks[2].href, 'https://tpl-news.test/shop');
  t.regex(got.html, /Summer sale/);
  t.regex(got.html, /href="\{\{\{RESEND_UNSUBSCRIBE_URL\}\}\}"/, 'the unsubscribe link is left for each recipient');
  t.regex(got.text, /^Summer sale\n\nUse WELCOME at checkout\./);

  // The template changes and is published again: the broadcast keeps its copy.
  const edit = await w.p.request('PATCH', `/templates/${template}`, {
    key: a.team.key,
    body: {
      subject: 'Changed',
      document: {
        blocks: [
          { id: 'x', type: 'text', text: 'Changed' },
          { id: 'f', type: 'footer' },
        ],
      },
    },
  });
  t.is(edit.status, 200, edit.text);
  t.is((await post(`/templates/${template}/publish`, {})).status, 200);
  const after = await get(id);
  t.is(after.subject, 'Summer sale');
  t.deepEqual(after.document, got.document);
  t.is(after.html, got.html);

  // A subject of its own wins over the template's; the copy is sent to the segment like any broadcast.
  const sent = await created(w, a.team, '/broadcasts', {
    segment_id: a.segment,
    template_id: template,
    subject: 'For {{{FIRST_NAME|you}}}',
    send: true,
  });
  const run = await fanOutAndDeliver(w, sent);
  t.is(run.outcome, 'sent');
  const [copy] = w.sink.deliveredTo('ann@tpl-inbox.test').slice(-1);
  const mail = await simpleParser(copy.raw);
  t.is(mail.subject, 'For Ann');
  t.regex(String(mail.html), /Changed/, 'made from the version published at its create');
  t.true(String(mail.html).includes(`href="${unsubscribeUrl(copy.raw)}"`));
});

test('an html template: its html and text copied with the variables filled; from and reply_to taken', async (t) => {
  const template = await publishedTemplate({
    name: 'Plain',
    subject: 'Hi',
    reply_to: 'help@tpl-news.test',
    html: '<p>{{{SEASON}}}: {{{CODE}}}</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Leave</a>',
    text: '{{{SEASON}}}: {{{CODE}}}',
  });
  const id = await created(w, a.team, '/broadcasts', {
    segment_id: a.segment,
    template_id: template,
    variables: { SEASON: 'Fall <&>', CODE: 'F10' },
  });
  t.like(await get(id), {
    document: null,
    html: '<p>Fall &lt;&amp;&gt;: F10</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Leave</a>',
    text: 'Fall <&>: F10',
    reply_to: ['help@tpl-news.test'],
    from: a.from,
  });
});

test("unpublished, deleted and other teams' templates, a missing value, a body beside it: 422 naming the field", async (t) => {
  const draft = await created(w, a.team, '/templates', { name: 'Draft', from: a.from, subject: 'x', html: '<p>x</p>' });
  const deleted = await publishedTemplate({ name: 'Gone', subject: '{{{SEASON}}}', html: '<p>x</p>' });
  t.is((await w.p.request('DELETE', `/templates/${deleted}`, { key: a.team.key })).status, 200);
  const theirs = await publishedTemplate({ name: 'Theirs', subject: 'x', html: '<p>x</p>' }, other);
  const mine = await publishedTemplate({ name: 'Mine', subject: '{{{SEASON}}}', html: '<p>{{{SEASON}}}</p>' });
  const cases: [Record<string, unknown>, string][] = [
    [{ template_id: draft }, 'template_id'],
    [{ template_id: deleted, variables: { SEASON: 'x' } }, 'template_id'],
    [{ template_id: theirs }, 'template_id'],
    [{ template_id: mine }, 'variables.SEASON'],
    [{ template_id: mine, variables: { SEASON: 3 } }, 'variables.SEASON'],
    [{ template_id: mine, variables: { SEASON: 'x' }, html: '<p>mine</p>' }, 'template_id'],
    [{ html: '<p>x</p>', from: a.from, subject: 'x', variables: { SEASON: 'x' } }, 'variables'],
  ];
  for (const [body, path] of cases) {
    const res = await post('/broadcasts', { segment_id: a.segment, name: 'Refused', ...body });
    t.is(res.status, 422, `${path}: ${res.text.slice(0, 200)}`);
    t.is(res.body.errors?.[0]?.path, path, res.text.slice(0, 200));
  }
  const missing = await post('/broadcasts', { segment_id: a.segment, html: '<p>x</p>' });
  t.is(missing.status, 422);
  t.is(missing.body.name, 'missing_required_field', 'without a template, from and subject are required');
  t.is(await w.p.db('broadcasts').where({ team_id: a.team.id, name: 'Refused' }).first(), undefined);
});
