// Sends naming a template, end to end: the SDK's emails.send and batch.send with `template: {id, variables}` → the
// api renders the template's published version → the mta's deliver job delivers it to a loopback MX (found through
// the loopback DNS) → the message the sink received, parsed, is the rendered one, as stored. Values are HTML-escaped
// in the html (unless printed with `raw`), not in the text or the subject. The refusals name what is wrong.
import test from 'ava';
import { Resend } from 'resend';
import { simpleParser } from 'mailparser';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { senderTeam } from './helpers/topic-sends.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import type { TestTeam } from './helpers/platform.ts';

let w: MtaWorld;
let team: TestTeam;
let from: string;
let resend: Resend;
test.before(async () => {
  w = await startMtaWorld();
  ({ team, from } = await senderTeam(w, 'tpl-shop.test'));
  w.mx('tpl-inbox.test');
  resend = new Resend(team.key, { baseUrl: w.p.url } as never);
});
test.after.always(async () => {
  await w?.close();
});

/** Delivers the email through the mta's job and answers the message the sink got for `to`, parsed. */
async function delivered(id: string, to: string) {
  await processDelivery(w.deps, id);
  // The Message-ID names the email: <id@domain>.
  const message = w.sink.deliveredTo(to).find((m) => m.raw.toString().includes(`<${id}@`));
  if (!message) throw new Error(`nothing delivered to ${to} for ${id}`);
  return simpleParser(message.raw);
}

async function template(body: Record<string, unknown>, publish = true): Promise<string> {
  const res = await w.p.request('POST', '/templates', { key: team.key, body: { name: 'T', ...body } });
  if (res.status !== 201) throw new Error(`POST /templates: ${res.status} ${res.text}`);
  if (publish) await w.p.request('POST', `/templates/${res.body.id}/publish`, { key: team.key });
  return res.body.id;
}

test('emails.send with a template: the published version rendered, escaped in html, stored and delivered as rendered', async (t) => {
  const templateId = await template({
    alias: 'receipt',
    from,
    subject: 'Receipt for {{{NAME}}}',
    html: '<h1>Hi {{{NAME}}}</h1><p>{{{NOTE|No note}}}</p><p>Total: {{{TOTAL}}} {{#if VIP}}(VIP){{/if}}</p><div>{{{raw SIGNATURE}}}</div><ul>{{#each ITEMS}}<li>{{name}} x{{qty}}</li>{{/each}}</ul><a href="https://tpl-shop.test/o/{{{ORDER.id}}}">Order</a>',
    text: 'Hi {{{NAME}}}\nTotal: {{{TOTAL}}}\n{{{NOTE|No note}}}',
    variables: [
      { key: 'NAME', type: 'string' },
      { key: 'NOTE', type: 'string' },
      { key: 'TOTAL', type: 'number' },
      { key: 'VIP', type: 'boolean', fallback_value: false },
      { key: 'SIGNATURE', type: 'string', fallback_value: '<b>The shop</b>' },
      { key: 'ITEMS', type: 'list', fallback_value: [] },
      { key: 'ORDER', type: 'object' },
    ],
  });
  const sent = await resend.emails.send({
    to: 'ann@tpl-inbox.test',
    template: {
      id: 'receipt',
      variables: {
        NAME: 'Ann <script>alert("x")</script> & co',
        TOTAL: 42.5,
        VIP: true,
        ITEMS: [
          { name: 'Pen', qty: 2 },
          { name: '<i>Ink</i>', qty: 1 },
        ],
        ORDER: { id: 'A"1' },
      } as never,
    },
  });
  t.is(sent.error, null, JSON.stringify(sent.error));
  const id = sent.data!.id;
  const html =
    '<h1>Hi Ann &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co</h1><p>No note</p><p>Total: 42.5 (VIP)</p><div><b>The shop</b></div><ul><li>Pen x2</li><li>&lt;i&gt;Ink&lt;/i&gt; x1</li></ul><a href="https://tpl-shop.test/o/A&quot;1">Order</a>';
  const stored = (await w.p.request('GET', `/emails/${id}`, { key: team.key })).body;
  t.like(stored, {
    from,
    subject: 'Receipt for Ann <script>alert("x")</script> & co',
    html,
    text: 'Hi Ann <script>alert("x")</script> & co\nTotal: 42.5\nNo note',
    // Sent by alias, stored by the template's id.
    template_id: templateId,
  });

  const mail = await delivered(id, 'ann@tpl-inbox.test');
  t.is(mail.subject, 'Receipt for Ann <script>alert("x")</script> & co');
  t.is(mail.html, html);
  t.is(mail.text?.trim(), 'Hi Ann <script>alert("x")</script> & co\nTotal: 42.5\nNo note');
  t.is(mail.from?.text, from.replace(/^News/, '"News"'));
  t.deepEqual(
    (await w.verifyDkim(w.sink.deliveredTo('ann@tpl-inbox.test').at(-1)!.raw)).map((d) => d.status),
    ['pass'],
  );
});

test('sends use the published version; a draft ahead of it changes nothing until it is published', async (t) => {
  const id = await template({
    from,
    subject: 'v1',
    html: '<p>version one {{{WHO}}}</p>',
    variables: [{ key: 'WHO', type: 'string', fallback_value: 'you' }],
  });
  await w.p.request('PATCH', `/templates/${id}`, {
    key: team.key,
    body: { subject: 'v2', html: '<p>version two {{{WHO}}}</p>' },
  });
  const first = await resend.emails.send({ to: 'bob@tpl-inbox.test', template: { id } });
  t.is(first.error, null, JSON.stringify(first.error));
  const one = await delivered(first.data!.id, 'bob@tpl-inbox.test');
  t.is(one.subject, 'v1');
  t.is(one.html, '<p>version one you</p>');
  t.is(one.text?.trim(), 'version one you', 'a template without text: the text part made from its html');

  await resend.templates.publish(id);
  const second = await resend.emails.send({ to: 'bob@tpl-inbox.test', template: { id, variables: { WHO: 'Bob' } } });
  const two = await delivered(second.data!.id, 'bob@tpl-inbox.test');
  t.is(two.subject, 'v2');
  t.is(two.html, '<p>version two Bob</p>');

  // The send's own from and subject win over the template's.
  const own = await resend.emails.send({ from, to: 'bob@tpl-inbox.test', subject: 'Own subject', template: { id } });
  t.is((await w.p.request('GET', `/emails/${own.data!.id}`, { key: team.key })).body.subject, 'Own subject');
});

test('batch.send with templates: each item rendered from its own values', async (t) => {
  const id = await template({
    from,
    subject: 'Hello {{{NAME}}}',
    html: '<p>Hello {{{NAME}}}</p>',
    variables: [{ key: 'NAME', type: 'string' }],
  });
  const batch = await resend.batch.send([
    { to: 'cy@tpl-inbox.test', template: { id, variables: { NAME: 'Cy' } } } as never,
    { to: 'di@tpl-inbox.test', template: { id, variables: { NAME: 'Di' } } } as never,
  ]);
  t.is(batch.error, null, JSON.stringify(batch.error));
  const [cy, di] = batch.data!.data;
  t.is((await delivered(cy.id, 'cy@tpl-inbox.test')).html, '<p>Hello Cy</p>');
  t.is((await delivered(di.id, 'di@tpl-inbox.test')).subject, 'Hello Di');
  t.is((await w.p.request('GET', `/emails/${di.id}`, { key: team.key })).body.template_id, id);
  // A send without a template names none.
  const plain = await resend.emails.send({ from, to: 'cy@tpl-inbox.test', subject: 'Plain', text: 'No template' });
  t.is((await w.p.request('GET', `/emails/${plain.data!.id}`, { key: team.key })).body.template_id, null);
});

test('refusals: a missing value, a wrong type, an unknown, unpublished or foreign template, html beside a template', async (t) => {
  const id = await template({
    from,
    subject: 'x',
    html: '<p>{{{PRICE}}} {{{NAME|friend}}} {{#if CODE}}<b>{{{CODE}}}</b>{{/if}}</p>',
    variables: [
      { key: 'PRICE', type: 'number' },
      { key: 'NAME', type: 'string' },
      { key: 'CODE', type: 'string' },
    ],
  });
  const draftOnly = await template({ from, subject: 'x', html: '<p>x</p>' }, false);
  const other = await w.p.createTeam('Other');
  const foreign = (await w.p.request('POST', '/templates', { key: other.key, body: { name: 'F', html: 'x' } })).body.id;
  await w.p.request('POST', `/templates/${foreign}/publish`, { key: other.key });
  // The other tests of the file send in this team at the same time: only this test's recipient is counted.
  const count = async () =>
    Number((await w.p.db('email_recipients').where({ address: 'ed@tpl-inbox.test' }).count({ n: '*' }))[0].n);
  const before = await count();
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ id }, 'template.variables.PRICE', /is required/],
    [{ id, variables: { PRICE: '12' } }, 'template.variables.PRICE', /must be a number/],
    [{ id, variables: { PRICE: 1, NAME: 5 } }, 'template.variables.NAME', /must be a string/],
    [{ id: 'no-such-template' }, 'template.id', /not found/],
    [{ id: draftOnly }, 'template.id', /no published version/],
    [{ id: foreign }, 'template.id', /not found/],
  ];
  for (const [named, path, message] of cases) {
    const res = await w.p.request('POST', '/emails', {
      key: team.key,
      body: { to: 'ed@tpl-inbox.test', template: named },
    });
    t.is(res.status, 422, res.text);
    t.is(res.body.name, 'validation_error');
    t.is(res.body.errors[0].path, path, JSON.stringify(named));
    t.regex(res.body.message, message);
  }
  const both = await w.p.request('POST', '/emails', {
    key: team.key,
    body: { to: 'ed@tpl-inbox.test', html: '<p>mine</p>', template: { id, variables: { PRICE: 1 } } },
  });
  t.like(both.body, { statusCode: 422, errors: [{ path: 'html' }] });
  // CODE is printed under {{#if CODE}}, NAME with an inline fallback: neither is required.
  const ok = await w.p.request('POST', '/emails', {
    key: team.key,
    body: { to: 'ed@tpl-inbox.test', template: { id, variables: { PRICE: 3 } } },
  });
  t.is(ok.status, 200, ok.text);
  t.is(await count(), before + 1, 'nothing was written by a refused send');
});

test('a huge loop is bounded: 422 naming the variables, nothing written', async (t) => {
  const id = await template({
    from,
    subject: 'x',
    html: '{{#each L}}{{#each ../L}}{{#each ../../L}}<b>x</b>{{/each}}{{/each}}{{/each}}',
    variables: [{ key: 'L', type: 'list' }],
  });
  const res = await w.p.request('POST', '/emails', {
    key: team.key,
    body: { to: 'fi@tpl-inbox.test', template: { id, variables: { L: Array.from({ length: 200 }, (_, i) => i) } } },
  });
  t.is(res.status, 422, res.text);
  t.like(res.body, { name: 'validation_error', errors: [{ path: 'template.variables' }] });
  t.regex(res.body.message, /loops would run more than 100000 steps/);
});
