// A broadcast written as a block document: the templates' schema and its 422s naming the block, the html and text
// rendered from it when written, merge tags in blocks filled per recipient through the real fan-out and mta, the
// footer's link the recipient's own unsubscribe link; and the send gate's checks naming the failing block.
import test from 'ava';
import { simpleParser } from 'mailparser';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { audience, created, fanOutAndDeliver, type Audience } from './helpers/broadcasts.ts';
import { oneClick, tokenOf, unsubscribeUrl } from './helpers/topic-sends.ts';
import { readUnsubscribeToken } from '../shared/emails/mail-tokens.ts';

let w: MtaWorld;
let a: Audience;
test.before(async () => {
  w = await startMtaWorld();
  w.mx('doc-inbox.test');
  a = await audience(w, 'doc-news.test', []);
  await created(w, a.team, '/contact-properties', { key: 'plan', type: 'string', fallback_value: 'Free' });
});
test.after.always(async () => {
  await w?.close();
});

const newsletter = (title = 'Hello {{{FIRST_NAME|there}}}') => ({
  preheader: 'News for you',
  blocks: [
    { id: 'title', type: 'heading', text: title },
    { id: 'intro', type: 'text', text: 'Your plan: {{{plan}}}.\nTom & Jerry <say> hi, {{{nick|Tom & Jerry}}}.' },
    { id: 'cta', type: 'button', text: 'Upgrade', href: 'https://doc-news.test/upgrade?plan={{{plan}}}' },
    { id: 'logo', type: 'image', src: 'https://doc-news.test/logo.png', alt: 'Doc News' },
    { id: 'foot', type: 'footer', text: 'Doc News, 1 Main St', unsubscribe_text: 'Leave the list' },
  ],
});

const get = async (id: string) => (await w.p.request('GET', `/broadcasts/${id}`, { key: a.team.key })).body;
const post = (path: string, body: unknown) => w.p.request('POST', path, { key: a.team.key, body });
const patch = (id: string, body: unknown) => w.p.request('PATCH', `/broadcasts/${id}`, { key: a.team.key, body });
const base = () => ({ segment_id: a.segment, from: a.from, subject: 'News for {{{FIRST_NAME|you}}}' });

test('a document broadcast: created, updated, rendered; GET answers the document; html replaces it', async (t) => {
  const id = await created(w, a.team, '/broadcasts', { ...base(), name: 'Doc', document: newsletter() });
  let got = await get(id);
  t.deepEqual(got.document, newsletter());
  t.is(got.template_id, null);
  t.regex(got.html, /Hello \{\{\{FIRST_NAME\|there\}\}\}/, 'the merge tags stay for the fan-out');
  t.regex(got.html, /href="\{\{\{RESEND_UNSUBSCRIBE_URL\}\}\}"[^>]*>Leave the list</);
  t.regex(got.text, /^Hello \{\{\{FIRST_NAME\|there\}\}\}\n\nYour plan/, 'the text is written from the blocks');

  t.is((await patch(id, { document: newsletter('Hi {{{FIRST_NAME|friend}}}') })).status, 200);
  got = await get(id);
  t.is(got.document.blocks[0].text, 'Hi {{{FIRST_NAME|friend}}}');
  t.regex(got.html, /Hi \{\{\{FIRST_NAME\|friend\}\}\}/);
  t.regex(got.text, /^Hi \{\{\{FIRST_NAME\|friend\}\}\}/);
  t.is((await patch(id, { text: 'My own text' })).status, 200);
  t.like(await get(id), { text: 'My own text', document: { blocks: [{ text: 'Hi {{{FIRST_NAME|friend}}}' }] } });

  const both = await patch(id, { html: '<p>x</p>', document: newsletter() });
  t.is(both.status, 422);
  t.is(both.body.errors[0].path, 'document');
  t.is((await patch(id, { html: '<p>Plain {{{FIRST_NAME}}}</p>' })).status, 200);
  t.like(await get(id), { document: null, html: '<p>Plain {{{FIRST_NAME}}}</p>' });

  const html = await created(w, a.team, '/broadcasts', { ...base(), html: '<p>Hi</p>' });
  t.is((await get(html)).document, null);
  const copy = await post(
    `/broadcasts/${await created(w, a.team, '/broadcasts', { ...base(), document: newsletter() })}/duplicate`,
    {},
  );
  t.deepEqual((await get(copy.body.id)).document, newsletter(), 'a duplicate keeps the document');
});

test("a bad document is 422 as a template's is: the field, and details.block_id for a block's merge tag", async (t) => {
  const doc = (blocks: unknown[]) => ({ blocks });
  const cases: [unknown, string, string?][] = [
    [doc([{ id: 'b', type: 'button', text: 'Go', href: 'javascript:alert(1)' }]), 'document.blocks.0.href'],
    [doc([{ id: 'x', type: 'marquee' }]), 'document.blocks.0.type'],
    [
      doc([
        { id: 'd', type: 'divider' },
        { id: 'd', type: 'divider' },
      ]),
      'document.blocks.1.id',
    ],
    [doc([]), 'document.blocks'],
    [doc([{ id: 'intro', type: 'text', text: 'Hi {{{FIRST_NAME}}' }]), 'document.blocks.0.text', 'intro'],
    [
      doc([
        { id: 'h', type: 'heading', text: 'Hi' },
        { id: 'go', type: 'button', text: 'Go', href: 'https://doc-news.test/{{#if plan}}x{{/if}}' },
      ]),
      'document.blocks.1.href',
      'go',
    ],
  ];
  for (const [document, path, blockId] of cases) {
    const res = await post('/broadcasts', { ...base(), name: 'Bad document', document });
    t.is(res.status, 422, `${path}: ${res.text.slice(0, 300)}`);
    t.is(res.body.errors?.[0]?.path, path, res.text.slice(0, 300));
    if (blockId) t.is(res.body.details?.block_id, blockId, path);
  }
  const both = await post('/broadcasts', { ...base(), name: 'Bad document', html: '<p>x</p>', document: newsletter() });
  t.like(both.body, { statusCode: 422, errors: [{ path: 'document' }] });
  t.is(await w.p.db('broadcasts').where({ team_id: a.team.id, name: 'Bad document' }).first(), undefined);
});

test('a document broadcast through the fan-out and the mta: block content, merge values, the unsubscribe link', async (t) => {
  const seg = await created(w, a.team, '/segments', { name: 'Doc readers' });
  await created(w, a.team, '/contacts', {
    email: 'ann@doc-inbox.test',
    first_name: 'Ann',
    properties: { plan: 'Pro <b>' },
    audience_id: seg,
  });
  await created(w, a.team, '/contacts', { email: 'bob@doc-inbox.test', audience_id: seg });
  const id = await created(w, a.team, '/broadcasts', {
    ...base(),
    segment_id: seg,
    document: newsletter(),
    preview_text: 'The June issue',
  });
  t.is((await post(`/broadcasts/${id}/send`, {})).status, 200);
  const run = await fanOutAndDeliver(w, id);
  t.is(run.outcome, 'sent');
  t.is(run.emails.length, 2);

  const [ann] = w.sink.deliveredTo('ann@doc-inbox.test');
  const [bob] = w.sink.deliveredTo('bob@doc-inbox.test');
  const annMail = await simpleParser(ann.raw);
  const bobMail = await simpleParser(bob.raw);
  t.is(annMail.subject, 'News for Ann');
  t.is(bobMail.subject, 'News for you');
  const annHtml = String(annMail.html);
  t.regex(annHtml, /<h1[^>]*>Hello Ann<\/h1>/);
  t.regex(annHtml, /Your plan: Pro &lt;b&gt;\.<br \/>Tom &amp; Jerry &lt;say&gt; hi, Tom &amp; Jerry\./);
  t.regex(
    annHtml,
    /href="https:\/\/doc-news\.test\/upgrade\?plan=Pro &lt;b&gt;"/,
    'a value in a link is escaped as an attribute',
  );
  t.regex(annHtml, /display:none[^>]*>The June issue</);
  t.regex(String(bobMail.html), /<h1[^>]*>Hello there<\/h1>/);
  t.regex(String(bobMail.html), /Your plan: Free\./, "the property's fallback");
  t.regex(bobMail.text ?? '', /^Hello there\n\nYour plan: Free\.\nTom & Jerry <say> hi, Tom & Jerry\./);

  const recipients = await w.p.db('email_recipients').whereIn('email_id', run.emails);
  for (const [copy, mail, address] of [
    [ann, annMail, 'ann@doc-inbox.test'],
    [bob, bobMail, 'bob@doc-inbox.test'],
  ] as const) {
    const url = unsubscribeUrl(copy.raw) ?? '';
    const recipient = recipients.find((r) => r.address === address)!;
    t.is(readUnsubscribeToken(w.deps.secrets, tokenOf(url)), recipient.id, address);
    t.true(String(mail.html).includes(`href="${url}"`), "the footer's link is the recipient's own");
    t.true(mail.text?.includes(`Leave the list: ${url}`), 'and the text part carries it');
    t.deepEqual(
      (await w.verifyDkim(copy.raw)).map((d) => d.status),
      ['pass'],
    );
  }
  t.is((await oneClick(w, tokenOf(unsubscribeUrl(bob.raw)!))).status, 200);
  t.true((await w.p.db('contacts').where({ team_id: a.team.id, email: 'bob@doc-inbox.test' }).first()).unsubscribed);
});

test('the send gate checks a document broadcast block by block: each failing check names its block', async (t) => {
  const seg = await created(w, a.team, '/segments', { name: 'Gate readers' });
  await created(w, a.team, '/contacts', { email: 'gate@doc-inbox.test', audience_id: seg });
  const document = {
    blocks: [
      { id: 'hello', type: 'text', text: `Hi {{{nickname}}}. ${'Our June issue is about the garden. '.repeat(8)}` },
      { id: 'broken', type: 'button', text: 'Go', href: 'https://doc news.test/a' },
      { id: 'pic', type: 'image', src: 'https://doc-news.test/p.png' },
      { id: 'foot', type: 'footer' },
    ],
  };
  const id = await created(w, a.team, '/broadcasts', { ...base(), segment_id: seg, document });
  const res = await post(`/broadcasts/${id}/send`, {});
  t.is(res.status, 422, res.text.slice(0, 300));
  const checks: { code: string; status: string; block_id?: string }[] = res.body.details.checks;
  const failing = checks.filter((c) => c.status === 'fail');
  t.is(failing.length, 2, JSON.stringify(checks));
  t.true(
    failing.every((c) => c.block_id),
    JSON.stringify(failing),
  );
  t.like(
    failing.find((c) => c.code === 'unresolved_variable'),
    { block_id: 'hello' },
  );
  t.like(
    failing.find((c) => c.code === 'links'),
    { block_id: 'broken' },
  );
  t.like(
    checks.find((c) => c.code === 'alt_text'),
    { status: 'warn', block_id: 'pic' },
  );
  t.is((await get(id)).status, 'draft');
  t.is((await post(`/broadcasts/${id}/send`, { acknowledge_checks: true })).status, 200);
});
