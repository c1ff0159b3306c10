// The receiving API on mail the real MX accepted over SMTP and the real receive job processed: list and search,
// date windows, pagination, the full email, dropped messages, who may reach what, and the official SDK.
// Attachments, downloads and delete: test/receiving-downloads.test.ts.
import test from 'ava';
import { Resend } from 'resend';
import type { Platform } from './helpers/platform.ts';
import { isError } from './helpers/http.ts';
import { BASE, PDF, ids, startReceivingWorld, type ReceivingWorld } from './helpers/receiving-world.ts';
import { newId } from '../shared/ids.ts';
import { processReceived } from '../inbound/receive/job.ts';
import { toStored } from '../shared/receiving/exact-text.ts';
import { DOWNLOAD_LINK_TTL_SECONDS, nowSeconds } from '../shared/links/signed.ts';

let w: ReceivingWorld;
let p: Platform;
test.before(async () => {
  w = await startReceivingWorld();
  p = w.p;
});
test.after.always(async () => {
  await w?.close();
});
const receivingTeam = () => w.receivingTeam();
const deliverOne = (to: string, mail: Record<string, unknown>) => w.deliverOne(to, mail);
const download = (url: string, prefix = '') => w.download(url, prefix);

test('retrieve: the full received email, headers as an object, raw as a fresh link, attachments without links', async (t) => {
  const { team, domain } = await receivingTeam();
  const id = await deliverOne(`orders@${domain}`, {
    from: 'Alice Example <alice@sender.test>',
    to: `Orders <orders@${domain}>`,
    cc: 'cc@other.test',
    bcc: 'hidden@other.test',
    replyTo: 'reply@sender.test',
    subject: 'Your order ✓',
    messageId: '<m1@sender.test>',
    text: 'plain body',
    html: '<p>html <img src="cid:logo@x"></p>',
    headers: { 'X-Custom': 'yes', 'X-Repeated': ['one', 'two'] },
    attachments: [
      { filename: 'invoice.pdf', content: PDF, contentType: 'application/pdf' },
      { filename: 'logo.png', content: Buffer.from('png'), contentType: 'image/png', cid: 'logo@x' },
    ],
  });
  const before = nowSeconds();
  const res = await p.request('GET', `/emails/receiving/${id}`, { key: team.key });
  t.is(res.status, 200, res.text);
  const e = res.body;
  t.deepEqual(Object.keys(e).sort(), [
    'attachments',
    'bcc',
    'cc',
    'created_at',
    'dropped_reason',
    'from',
    'headers',
    'html',
    'id',
    'message_id',
    'object',
    'raw',
    'received_for',
    'reply_to',
    'subject',
    'text',
    'to',
  ]);
  t.is(e.object, 'email');
  t.is(e.id, id);
  t.is(e.from, 'Alice Example <alice@sender.test>');
  t.deepEqual(e.to, [`Orders <orders@${domain}>`]);
  t.deepEqual(e.cc, ['cc@other.test']);
  t.deepEqual(e.reply_to, ['reply@sender.test']);
  t.deepEqual(e.received_for, [`orders@${domain}`]);
  t.is(e.subject, 'Your order ✓');
  t.is(e.message_id, '<m1@sender.test>');
  t.is(e.text.trim(), 'plain body');
  t.regex(e.html, /cid:logo@x/);
  t.is(e.dropped_reason, null);
  t.regex(e.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  // Header names in lower case; a repeated field keeps both values, in order.
  t.is(e.headers['x-custom'], 'yes');
  t.is(e.headers['x-repeated'], 'one\ntwo');
  t.is(e.headers.subject, '=?UTF-8?Q?Your_order_=E2=9C=93?=', 'values as written, not decoded');
  t.is(e.headers['message-id'], '<m1@sender.test>');
  t.deepEqual(
    e.attachments.map((a: Record<string, unknown>) => Object.keys(a).sort()),
    [
      ['content_disposition', 'content_id', 'content_type', 'filename', 'id', 'size'],
      ['content_disposition', 'content_type', 'filename', 'id', 'size'],
    ],
  );
  t.like(e.attachments[0], {
    filename: 'logo.png',
    content_type: 'image/png',
    content_disposition: 'inline',
    content_id: 'logo@x',
    size: 3,
  });
  t.like(e.attachments[1], {
    filename: 'invoice.pdf',
    content_type: 'application/pdf',
    content_disposition: 'attachment',
    size: PDF.length,
  });
  // The raw source is never inline: a fresh link, 15 minutes, to raw.eml.
  t.deepEqual(Object.keys(e.raw).sort(), ['download_url', 'expires_at']);
  t.true(e.raw.download_url.startsWith(`${BASE}/emails/receiving/${id}/raw/download?expires=`));
  const expires = Number(new URL(e.raw.download_url).searchParams.get('expires'));
  t.true(expires >= before + DOWNLOAD_LINK_TTL_SECONDS && expires <= nowSeconds() + DOWNLOAD_LINK_TTL_SECONDS);
  t.is(e.raw.expires_at, new Date(expires * 1000).toISOString());
  // At /api/v1 too.
  t.is((await p.request('GET', `/api/v1/emails/receiving/${id}`, { key: team.key })).body.id, id);
});

test('list: rows newest first without html, text, headers or received_for; pages by received-email ids', async (t) => {
  const { team, domain } = await receivingTeam();
  const sent: string[] = [];
  for (let i = 0; i < 5; i++)
    sent.push(
      await deliverOne(`in@${domain}`, {
        subject: `n${i}`,
        text: 'x',
        attachments: i === 0 ? [{ filename: 'a.txt', content: 'a' }] : [],
      }),
    );
  const newest = [...sent].reverse();
  const all = await p.request('GET', '/emails/receiving', { key: team.key });
  t.is(all.status, 200, all.text);
  t.is(all.body.object, 'list');
  t.false(all.body.has_more);
  t.deepEqual(ids(all), newest);
  t.deepEqual(Object.keys(all.body.data[0]).sort(), [
    'attachments',
    'bcc',
    'cc',
    'created_at',
    'dropped_reason',
    'from',
    'id',
    'message_id',
    'reply_to',
    'subject',
    'to',
  ]);
  t.deepEqual(
    all.body.data[4].attachments.map((a: { filename: string }) => a.filename),
    ['a.txt'],
  );
  t.false('download_url' in all.body.data[4].attachments[0]);

  const first = await p.request('GET', '/emails/receiving?limit=2', { key: team.key });
  t.deepEqual(ids(first), newest.slice(0, 2));
  t.true(first.body.has_more);
  const second = await p.request('GET', `/emails/receiving?limit=2&after=${newest[1]}`, { key: team.key });
  t.deepEqual(ids(second), newest.slice(2, 4));
  t.true(second.body.has_more);
  const last = await p.request('GET', `/emails/receiving?limit=2&after=${newest[3]}`, { key: team.key });
  t.deepEqual(ids(last), newest.slice(4));
  t.false(last.body.has_more);
  const back = await p.request('GET', `/emails/receiving?limit=2&before=${newest[4]}`, { key: team.key });
  t.deepEqual(ids(back), newest.slice(2, 4));
  t.true(back.body.has_more);
  isError(
    t,
    await p.request('GET', `/emails/receiving?after=${newest[0]}&before=${newest[1]}`, { key: team.key }),
    422,
    'validation_error',
  );
  isError(t, await p.request('GET', '/emails/receiving?limit=101', { key: team.key }), 422, 'validation_error');
});

test('search: a case-insensitive substring of subject, sender name or address, or any recipient; % and _ are literal', async (t) => {
  const { team, domain } = await receivingTeam();
  const invoice = await deliverOne(`billing@${domain}`, {
    from: 'Carol Jones <carol@acme.test>',
    to: `Billing <billing@${domain}>`,
    subject: 'Invoice 100% paid',
    text: 'x',
  });
  const underscore = await deliverOne(`sales@${domain}`, {
    from: 'dave@shop.test',
    to: `sales@${domain}`,
    cc: 'Eve Watcher <eve@watch.test>',
    subject: 'order_42 shipped',
    text: 'x',
  });
  // Only in the envelope: a blind copy names nobody in the headers.
  const blind = await deliverOne(`secret-desk@${domain}`, {
    from: 'frank@plain.test',
    to: 'someone@elsewhere.test',
    subject: 'Hello',
    text: 'x',
  });
  const search = async (q: string) => {
    const res = await p.request('GET', `/emails/receiving?search=${encodeURIComponent(q)}`, { key: team.key });
    t.is(res.status, 200, res.text);
    return ids(res).sort();
  };
  t.deepEqual(await search('INVOICE'), [invoice], 'subject, any case');
  t.deepEqual(await search('carol jones'), [invoice], 'sender name');
  t.deepEqual(await search('@ACME.test'), [invoice], 'sender address');
  t.deepEqual(await search('billing@'), [invoice], 'a To recipient');
  t.deepEqual(await search('eve watcher'), [underscore], 'a Cc recipient by name');
  t.deepEqual(await search('SECRET-DESK'), [blind], 'an envelope recipient');
  t.deepEqual(await search('100%'), [invoice], '% literal');
  t.deepEqual(await search('%'), [invoice], 'a lone % matches only a %');
  t.deepEqual(await search('0% p'), [invoice]);
  t.deepEqual(await search('_'), [underscore], '_ matches only an underscore');
  t.deepEqual(await search('order_4'), [underscore]);
  t.deepEqual(await search('order 4'), []);
  t.deepEqual(await search('ord%42'), [], '% is no wildcard');
  t.deepEqual(await search('\\'), [], 'the escape character itself is literal');
  t.deepEqual(await search('nothing like it'), []);
  t.deepEqual(await search(domain), [blind, invoice, underscore].sort());
  // The search composes with paging.
  const page = await p.request('GET', `/emails/receiving?search=${domain}&limit=1`, { key: team.key });
  t.true(page.body.has_more);
  t.is(page.body.data.length, 1);
  isError(t, await p.request('GET', '/emails/receiving?search=', { key: team.key }), 422, 'validation_error');
  isError(
    t,
    await p.request('GET', `/emails/receiving?search=${'a'.repeat(201)}`, { key: team.key }),
    422,
    'validation_error',
  );
  t.is((await p.request('GET', `/emails/receiving?search=${'a'.repeat(200)}`, { key: team.key })).status, 200);
});

test('start_date and end_date are inclusive; a date alone covers its whole UTC day', async (t) => {
  const { team, domain } = await receivingTeam();
  const times = [
    '2026-03-01T23:59:59.999Z',
    '2026-03-02T00:00:00.000Z',
    '2026-03-02T12:00:00.000Z',
    '2026-03-02T23:59:59.999Z',
    '2026-03-03T00:00:00.000Z',
  ];
  const made: string[] = [];
  for (const at of times) {
    const id = await deliverOne(`d@${domain}`, { subject: at, text: 'x' });
    // The MX stamps the arrival time; the window is tested at fixed instants around its edges.
    await p
      .db('received_emails')
      .where({ id })
      .update({ created_at: new Date(at) });
    made.push(id);
  }
  const window = async (query: string) => {
    const res = await p.request('GET', `/emails/receiving?${query}`, { key: team.key });
    t.is(res.status, 200, res.text);
    return ids(res)
      .map((id) => times[made.indexOf(id)])
      .sort();
  };
  t.deepEqual(
    await window('start_date=2026-03-02T00:00:00.000Z&end_date=2026-03-02T12:00:00.000Z'),
    times.slice(1, 3),
    'both instants inclusive',
  );
  t.deepEqual(await window('start_date=2026-03-02&end_date=2026-03-02'), times.slice(1, 4), 'one whole day');
  t.deepEqual(await window('start_date=2026-03-02T12:00:00.000Z'), times.slice(2));
  t.deepEqual(await window('end_date=2026-03-01'), times.slice(0, 1));
  t.deepEqual(
    await window('start_date=2026-03-02T13:00:00%2B01:00&end_date=2026-03-02T12:00:00Z'),
    times.slice(2, 3),
    'an offset is honoured',
  );
  t.deepEqual(await window('start_date=2026-03-02T12:00:00.000Z&end_date=2026-03-02T12:00:00.000Z'), times.slice(2, 3));
  t.deepEqual(
    await window(`start_date=2026-03-02&search=${encodeURIComponent('T12:')}`),
    times.slice(2, 3),
    'dates and search together',
  );
  isError(
    t,
    await p.request('GET', '/emails/receiving?start_date=2026-03-03&end_date=2026-03-02', { key: team.key }),
    422,
    'validation_error',
  );
  isError(
    t,
    await p.request('GET', '/emails/receiving?start_date=yesterday', { key: team.key }),
    422,
    'validation_error',
  );
  isError(
    t,
    await p.request('GET', '/emails/receiving?end_date=2026-13-01', { key: team.key }),
    422,
    'validation_error',
  );
});

test('a dropped message is listed with its reason, no body and no attachments; raw is a link only while the source is kept', async (t) => {
  const { team, domain } = await receivingTeam();
  const id = await w.send({
    from: 'a@sender.test',
    to: `x@${domain}`,
    subject: 'late',
    text: 'body',
    attachments: [{ filename: 'a.txt', content: 'a' }],
  });
  // The domain stopped receiving between the 250 and the job: no mailbox takes it any more.
  await p.db('domains').where({ name: domain }).update({ receiving: 'disabled' });
  t.is(await processReceived(w.deps, id), 'processed');
  const [row] = (await p.request('GET', '/emails/receiving', { key: team.key })).body.data;
  t.like(row, { id, subject: 'late', dropped_reason: 'no_mailbox', attachments: [] });
  const e = (await p.request('GET', `/emails/receiving/${id}`, { key: team.key })).body;
  t.like(e, { html: null, text: null, dropped_reason: 'no_mailbox', attachments: [] });
  // Whether the receive job keeps a dropped message's source is its policy (only parse_failed must stay
  // downloadable); the API offers a link exactly when the source is there.
  const rawKey = (await p.db('received_messages').where({ id }).first()).raw_blob_key;
  const link = (await p.request('GET', `/emails/receiving/${id}`, { key: team.key })).body.raw;
  await p.deps.blobs.put(rawKey, Buffer.from('Subject: kept\r\n\r\nx\r\n'));
  const kept = (await p.request('GET', `/emails/receiving/${id}`, { key: team.key })).body.raw;
  t.is(await (await download(kept.download_url)).text(), 'Subject: kept\r\n\r\nx\r\n');
  await p.deps.blobs.delete(rawKey);
  t.is((await p.request('GET', `/emails/receiving/${id}`, { key: team.key })).body.raw, null);
  t.is((await download(kept.download_url)).status, 404, 'a link to a source that is gone is refused');
  if (link) t.is((await download(link.download_url)).status, 404);
});

test('a restricted sending_access key reaches no receiving route; other teams see nothing', async (t) => {
  const { team, domain } = await receivingTeam();
  const id = await deliverOne(`x@${domain}`, {
    subject: 's',
    text: 'x',
    attachments: [{ filename: 'a.txt', content: 'a' }],
  });
  const [att] = (await p.request('GET', `/emails/receiving/${id}/attachments`, { key: team.key })).body.data;
  const created = await p.request('POST', '/api-keys', {
    key: team.key,
    body: { name: 'send only', permission: 'sending_access' },
  });
  t.is(created.status, 201, created.text);
  const sending = created.body.token;
  const routes: [string, string][] = [
    ['GET', '/emails/receiving'],
    ['GET', `/emails/receiving/${id}`],
    ['DELETE', `/emails/receiving/${id}`],
    ['GET', `/emails/receiving/${id}/attachments`],
    ['GET', `/emails/receiving/${id}/attachments/${att.id}`],
  ];
  for (const [method, path] of routes)
    isError(t, await p.request(method, path, { key: sending }), 401, 'restricted_api_key');
  const other = await p.createTeam();
  t.deepEqual((await p.request('GET', '/emails/receiving', { key: other.key })).body.data, []);
  for (const [method, path] of routes.slice(1))
    isError(t, await p.request(method, path, { key: other.key }), 404, 'not_found');
  // Nothing was deleted on the way.
  t.is((await p.request('GET', `/emails/receiving/${id}`, { key: team.key })).status, 200);
});

test('received and sent ids are separate: GET /emails/{id} and its share link do not find a received id, nor the reverse', async (t) => {
  const { team, domain } = await receivingTeam();
  const id = await deliverOne(`x@${domain}`, { subject: 's', text: 'x' });
  isError(t, await p.request('GET', `/emails/${id}`, { key: team.key }), 404, 'not_found');
  isError(t, await p.request('POST', `/emails/${id}/share`, { key: team.key, body: {} }), 404, 'not_found');
  isError(t, await p.request('GET', `/emails/${id}/attachments`, { key: team.key }), 404, 'not_found');
  const managed = (await p.request('GET', '/domains', { key: team.key })).body.data.find(
    (d: { managed: boolean }) => d.managed,
  ).name;
  const sent = await p.request('POST', '/emails', {
    key: team.key,
    body: {
      from: `me@${managed}`,
      to: `delivered@${p.config.SIMULATOR_DOMAIN}`,
      subject: 'sent',
      text: 'x',
      scheduled_at: 'in 1 hour',
    },
  });
  t.is(sent.status, 200, sent.text);
  isError(t, await p.request('GET', `/emails/receiving/${sent.body.id}`, { key: team.key }), 404, 'not_found');
  isError(t, await p.request('DELETE', `/emails/receiving/${sent.body.id}`, { key: team.key }), 404, 'not_found');
  t.is((await p.request('GET', `/emails/${sent.body.id}`, { key: team.key })).status, 200);
});

test('the official resend SDK reads received mail unchanged: list, get, attachments', async (t) => {
  const { team, domain } = await receivingTeam();
  const id = await deliverOne(`sdk@${domain}`, {
    subject: 'via sdk',
    text: 'x',
    attachments: [{ filename: 'a.txt', content: 'a' }],
  });
  const resend = new Resend(team.key, { baseUrl: p.url } as never);
  const list = await resend.emails.receiving.list({ limit: 10 });
  t.is(list.error, null, JSON.stringify(list.error));
  t.deepEqual(
    list.data?.data.map((e) => e.id),
    [id],
  );
  const got = await resend.emails.receiving.get(id);
  t.is(got.error, null, JSON.stringify(got.error));
  t.like(got.data, { id, subject: 'via sdk', received_for: [`sdk@${domain}`] });
  t.truthy(got.data?.raw?.download_url);
  const attachments = await resend.emails.receiving.attachments.list({ emailId: id });
  t.is(attachments.error, null, JSON.stringify(attachments.error));
  const [a] = attachments.data!.data;
  t.like(a, { filename: 'a.txt' });
  const one = await resend.emails.receiving.attachments.get({ emailId: id, id: a.id });
  t.like(one.data, { id: a.id, filename: 'a.txt' });
  t.is((await download(one.data!.download_url)).status, 200);
  const missing = await resend.emails.receiving.get(newId());
  t.is(missing.error?.name, 'not_found');
});

test('html and text as decoded, byte for byte: a NUL and a lone surrogate survive the database and the JSON answer', async (t) => {
  const { team, domain } = await receivingTeam();
  // A NUL decoded from quoted-printable (=00) and from UTF-16: mailparser decodes both to U+0000.
  const text = 'before\u0000after';
  const html = '<p>a NUL \u0000 here</p>';
  const raw = [
    `From: sender@sender.test`,
    `To: inbox@${domain}`,
    'Subject: exact',
    'MIME-Version: 1.0',
    'Content-Type: multipart/alternative; boundary="x"',
    '',
    '--x',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    'before=00after',
    '--x',
    'Content-Type: text/html; charset=utf-16le',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from(html, 'utf16le').toString('base64'),
    '--x--',
    '',
  ].join('\r\n');
  const id = await deliverOne(`inbox@${domain}`, {
    envelope: { from: 'sender@sender.test', to: [`inbox@${domain}`] },
    raw,
  });
  const get = () => p.request('GET', `/emails/receiving/${id}`, { key: team.key });
  const res = await get();
  t.is(res.status, 200, res.text);
  t.is(res.body.text, text);
  t.is(res.body.html, html);
  t.true(res.text.includes('before\\u0000after'), 'escaped in the JSON');

  // mailparser's decoders turn an unpaired surrogate into U+FFFD before we see it; the storage keeps one all the
  // same, as the receive job writes it (toStored), through the column and the JSON answer.
  const lone = { text: 'a lone \ud800 high surrogate\u0000', html: '<p>a lone \udc00 low one</p>' };
  const [storedText, storedHtml] = [toStored(lone.text), toStored(lone.html)];
  await p.db('received_emails').where({ id }).update({
    text: storedText.text,
    text_exact: storedText.exact,
    html: storedHtml.text,
    html_exact: storedHtml.exact,
  });
  const again = await get();
  t.is(again.body.text, lone.text);
  t.is(again.body.html, lone.html);
  t.true(again.text.includes('\\ud800') && again.text.includes('\\udc00'));

  // An ordinary body keeps to the text column alone.
  const plain = await deliverOne(`inbox@${domain}`, {
    from: 'sender@sender.test',
    subject: 'plain',
    text: 'nothing odd',
    html: '<p>nothing odd</p>',
  });
  t.like(await p.db('received_emails').where({ id: plain }).first('text', 'text_exact', 'html_exact'), {
    text: 'nothing odd',
    text_exact: null,
    html_exact: null,
  });
});
