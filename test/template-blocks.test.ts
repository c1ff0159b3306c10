// Templates made of a block document: validated (ids unique, schemes, sizes, no columns in columns), rendered once
// through MJML into responsive HTML and a text part that keep the variables, then filled per send like any
// template. Mistakes are named by the block's field and id.
import test from 'ava';
import { simpleParser } from 'mailparser';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { senderTeam } from './helpers/topic-sends.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import type { TestTeam } from './helpers/platform.ts';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { nodeRequest } from './helpers/http.ts';
import { root } from '../shared/layout.ts';
import { socialNetworks } from '../shared/templates/blocks.ts';

let w: MtaWorld;
let team: TestTeam;
let from: string;
test.before(async () => {
  w = await startMtaWorld();
  ({ team, from } = await senderTeam(w, 'blocks-shop.test'));
  w.mx('blocks-inbox.test');
});
test.after.always(async () => {
  await w?.close();
});

const variables = [
  { key: 'NAME', type: 'string' },
  { key: 'CODE', type: 'string', fallback_value: 'WELCOME' },
  { key: 'URL', type: 'string', fallback_value: 'https://blocks-shop.test/start' },
];

const newsletter = {
  preheader: 'Ten percent off for {{{NAME}}}',
  background_color: '#f3f4f6',
  blocks: [
    {
      id: 'logo',
      type: 'image',
      src: 'https://blocks-shop.test/logo.png',
      alt: 'Blocks Shop',
      href: 'https://blocks-shop.test',
    },
    { id: 'title', type: 'heading', text: 'Hello {{{NAME}}}', level: 1 },
    { id: 'intro', type: 'text', text: 'Use {{{CODE}}} at checkout.\nIt ends Sunday & it is <not> a trick.' },
    { id: 'cta', type: 'button', text: 'Shop now', href: '{{{URL}}}', background_color: '#111827' },
    { id: 'rule', type: 'divider' },
    {
      id: 'two',
      type: 'columns',
      columns: [
        { blocks: [{ id: 'left', type: 'text', text: 'Left column' }] },
        { blocks: [{ id: 'right', type: 'image', src: 'https://blocks-shop.test/r.png', alt: 'Right' }] },
      ],
    },
    { id: 'follow', type: 'social', links: [{ network: 'github', href: 'https://github.com/blocks-shop' }] },
    { id: 'foot', type: 'footer', text: 'Blocks Shop, 1 Main St' },
  ],
};

const create = (body: Record<string, unknown>) =>
  w.p.request('POST', '/templates', {
    key: team.key,
    body: { name: 'Blocks', from, subject: 'News for {{{NAME}}}', variables, ...body },
  });

test('a document renders through MJML when written: responsive html and a text part, variables kept for the send', async (t) => {
  const res = await create({ document: newsletter });
  t.is(res.status, 201, res.text);
  const got = (await w.p.request('GET', `/templates/${res.body.id}`, { key: team.key })).body;
  t.deepEqual(
    got.document.blocks.map((b: { id: string }) => b.id),
    ['logo', 'title', 'intro', 'cta', 'rule', 'two', 'follow', 'foot'],
  );
  t.regex(got.html, /^<!doctype html>/i);
  t.regex(got.html, /@media only screen and \(min-width:480px\)/, 'responsive columns');
  t.regex(got.html, /Hello \{\{\{NAME\}\}\}/);
  t.regex(got.html, /It ends Sunday &amp; it is &lt;not&gt; a trick\./, 'block text is escaped');
  t.regex(got.html, /href="\{\{\{URL\}\}\}"/);
  t.regex(got.html, /href="\{\{\{RESEND_UNSUBSCRIBE_URL\}\}\}"/, 'the footer carries the unsubscribe link');
  t.notRegex(got.html, /fonts\.googleapis/, 'no web fonts loaded from elsewhere');
  // Every image comes from a host the sender named or from the platform (a social link's default icon), never from
  // MJML's own host.
  const icon = `${w.p.config.PUBLIC_BASE_URL}/email-assets/social/github.png`;
  t.deepEqual(
    [...got.html.matchAll(/<img[^>]* src="([^"]*)"/g)].map((m: RegExpMatchArray) => m[1]),
    ['https://blocks-shop.test/logo.png', 'https://blocks-shop.test/r.png', icon],
  );
  t.notRegex(got.html, /mailjet/);
  t.is(
    got.text,
    [
      '[Blocks Shop] (https://blocks-shop.test)',
      'Hello {{{NAME}}}',
      'Use {{{CODE}}} at checkout.\nIt ends Sunday & it is <not> a trick.',
      'Shop now: {{{URL}}}',
      '---',
      'Left column',
      '[Right]',
      'github: https://github.com/blocks-shop',
      'Blocks Shop, 1 Main St\n\nUnsubscribe: {{{RESEND_UNSUBSCRIBE_URL}}}',
    ].join('\n\n'),
  );

  await w.p.request('POST', `/templates/${res.body.id}/publish`, { key: team.key });
  const sent = await w.p.request('POST', '/emails', {
    key: team.key,
    body: { to: 'ann@blocks-inbox.test', template: { id: res.body.id, variables: { NAME: 'Ann & <Bob>' } } },
  });
  t.is(sent.status, 200, sent.text);
  await processDelivery(w.deps, sent.body.id);
  const raw = w.sink.deliveredTo('ann@blocks-inbox.test').find((m) => m.raw.toString().includes(`<${sent.body.id}@`))!;
  const mail = await simpleParser(raw.raw);
  t.is(mail.subject, 'News for Ann & <Bob>');
  t.regex(String(mail.html), /Hello Ann &amp; &lt;Bob&gt;/);
  t.regex(String(mail.html), /href="https:\/\/blocks-shop\.test\/start"/, 'the fallback of URL');
  t.regex(String(mail.html), /Ten percent off for Ann &amp; &lt;Bob&gt;/, 'the preheader');
  t.regex(mail.text ?? '', /Use WELCOME at checkout\./);
  t.regex(mail.text ?? '', /Hello Ann & <Bob>/, 'not escaped in the text part');
});

test("a social link's default icon is served by the platform to anyone, without a key or a User-Agent", async (t) => {
  for (const network of socialNetworks) {
    const res = await nodeRequest(w.p.url, { method: 'GET', path: `/email-assets/social/${network}.png` });
    t.is(res.status, 200, network);
    t.is(res.headers['content-type'], 'image/png');
    t.regex(String(res.headers['cache-control']), /^public, max-age=\d+$/);
    t.true(Buffer.from(res.text, 'latin1').length > 0);
  }
  const png = await fetch(`${w.p.url}/email-assets/social/github.png`);
  t.deepEqual(
    Buffer.from(await png.arrayBuffer()),
    readFileSync(path.join(root, 'shared/templates/social-icons/github.png')),
  );
  t.is((await fetch(`${w.p.url}/email-assets/social/github.png`, { method: 'HEAD' })).status, 200);
  for (const other of ['/email-assets/social/myspace.png', '/email-assets/social/github.svg', '/email-assets/social/'])
    t.is((await w.p.request('GET', other)).status, 404, other);
  t.is((await fetch(`${w.p.url}/email-assets/social/github.png`, { method: 'POST' })).status, 404);
});

test('bad documents: each refusal names the block field (and the block), nothing is written', async (t) => {
  const doc = (blocks: unknown[]) => ({ blocks });
  const cases: [unknown, string, string?][] = [
    [
      doc([
        { id: 'a', type: 'text', text: 'x' },
        { id: 'a', type: 'divider' },
      ]),
      'document.blocks.1.id',
    ],
    [doc([{ id: 'b', type: 'button', text: 'Go', href: 'javascript:alert(1)' }]), 'document.blocks.0.href'],
    [doc([{ id: 'i', type: 'image', src: 'data:image/png;base64,AAAA' }]), 'document.blocks.0.src'],
    [
      doc([
        {
          id: 'c',
          type: 'columns',
          columns: [{ blocks: [{ id: 'n', type: 'columns', columns: [] }] }, { blocks: [] }],
        },
      ]),
      'document.blocks.0.columns.0.blocks.0.type',
    ],
    [doc([{ id: 'x', type: 'marquee' }]), 'document.blocks.0.type'],
    [doc([{ id: 'bad id!', type: 'divider' }]), 'document.blocks.0.id'],
    [doc([]), 'document.blocks'],
    [doc([{ id: 't', type: 'text', text: 'Hi {{#if NAME}}' }]), 'document.blocks.0.text', 't'],
    [doc([{ id: 'u', type: 'button', text: 'Go', href: '{{{NOPE}}}' }]), 'document.blocks.0.href', 'u'],
    [
      doc([
        {
          id: 'k',
          type: 'columns',
          columns: [{ blocks: [{ id: 'in', type: 'text', text: '{{shout NAME}}' }] }, { blocks: [] }],
        },
      ]),
      'document.blocks.0.columns.0.blocks.0.text',
      'in',
    ],
    [doc(Array.from({ length: 201 }, (_, i) => ({ id: `d${i}`, type: 'divider' }))), 'document.blocks'],
  ];
  for (const [document, path, blockId] of cases) {
    const res = await create({ name: 'Bad document', document });
    t.is(res.status, 422, `${path}: ${res.text.slice(0, 300)}`);
    t.is(res.body.errors?.[0]?.path, path, res.text.slice(0, 300));
    if (blockId) t.is(res.body.details?.block_id, blockId);
  }
  const both = await create({ name: 'Bad document', html: '<p>x</p>', document: newsletter });
  t.like(both.body, { statusCode: 422, errors: [{ path: 'document' }] });
  const withText = await create({ name: 'Bad document', document: newsletter, text: 'mine' });
  t.like(withText.body, { statusCode: 422, errors: [{ path: 'text' }] });
  t.is(await w.p.db('templates').where({ team_id: team.id, name: 'Bad document' }).first(), undefined);
});

test('size limits: a 5 MB document is 413, one past 512 KB is 422; variables in block text are escaped at send', async (t) => {
  const huge = { blocks: [{ id: 'big', type: 'text', text: 'x'.repeat(20_000) }] };
  const five = { blocks: Array.from({ length: 260 }, (_, i) => ({ ...huge.blocks[0], id: `b${i}` })) };
  const res = await create({ document: five });
  t.is(res.status, 413, res.text.slice(0, 200));
  t.is(res.body.name, 'validation_error');
  const over = { blocks: Array.from({ length: 30 }, (_, i) => ({ ...huge.blocks[0], id: `b${i}` })) };
  const big = await create({ document: over });
  t.is(big.status, 422, big.text.slice(0, 200));
  t.is(big.body.errors[0].path, 'document');
  t.regex(big.body.errors[0].message, /at most 524288/);
});

test('switching a template between a document and html', async (t) => {
  const id = (await create({ document: newsletter })).body.id;
  const toHtml = await w.p.request('PATCH', `/templates/${id}`, { key: team.key, body: { html: '<p>{{{NAME}}}</p>' } });
  t.is(toHtml.status, 200, toHtml.text);
  let got = (await w.p.request('GET', `/templates/${id}`, { key: team.key })).body;
  t.like(got, { document: null, html: '<p>{{{NAME}}}</p>', text: null });
  const back = await w.p.request('PATCH', `/templates/${id}`, { key: team.key, body: { document: newsletter } });
  t.is(back.status, 200, back.text);
  got = (await w.p.request('GET', `/templates/${id}`, { key: team.key })).body;
  t.is(got.document.blocks.length, 8);
  t.regex(got.text, /^\[Blocks Shop\]/);
  const text = await w.p.request('PATCH', `/templates/${id}`, { key: team.key, body: { text: 'mine' } });
  t.like(text.body, { statusCode: 422, errors: [{ path: 'text' }] });
});
