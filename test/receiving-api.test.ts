// The receiving API on mail the real MX accepted over SMTP and the real receive job processed: the full email,
// html and text exactly as decoded, dropped messages, who may reach what, and the official SDK. Lists, search and
// date windows: test/receiving-api-list.test.ts; attachments, downloads and delete: test/receiving-downloads.test.ts.
import test from 'ava';
import { Resend } from 'resend';
import { isError } from './helpers/http.ts';
import { BASE, PDF, startReceivingWorld, type ReceivingWorld } from './helpers/receiving-world.ts';
import { newId } from '../shared/ids.ts';
import { processReceived } from '../inbound/receive/job.ts';
import { toStored } from '../shared/receiving/exact-text.ts';
import { DOWNLOAD_LINK_TTL_SECONDS, nowSeconds } from '../shared/links/signed.ts';

let w: ReceivingWorld;
test.before(async () => {
  w = await startReceivingWorld();
});
test.after.always(() => w?.close());

test('retrieve: the full received email, headers as an object, raw as a fresh link, attachments without links', async (t) => {
  const { team, domain } = await w.receivingTeam();
  const id = await w.deliverOne(`orders@${domain}`, {
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
  const res = await w.p.request('GET', `/emails/receiving/${id}`, { key: team.key });
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
  t.is((await w.p.request('GET', `/api/v1/emails/receiving/${id}`, { key: team.key })).body.id, id);
});

test('html and text as decoded, byte for byte: a NUL and a lone surrogate survive the database and the JSON answer', async (t) => {
  const { team, domain } = await w.receivingTeam();
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
  const id = await w.deliverOne(`inbox@${domain}`, {
    envelope: { from: 'sender@sender.test', to: [`inbox@${domain}`] },
    raw,
  });
  const get = () => w.p.request('GET', `/emails/receiving/${id}`, { key: team.key });
  const res = await get();
  t.is(res.status, 200, res.text);
  t.is(res.body.text, text);
  t.is(res.body.html, html);
  t.true(res.text.includes('before\\u0000after'), 'escaped in the JSON');

  // mailparser's decoders turn an unpaired surrogate into U+FFFD before we see it; the storage keeps one all the
  // same, as the receive job writes it (toStored), through the column and the JSON answer.
  const lone = { text: 'a lone \ud800 high surrogate\u0000', html: '<p>a lone \udc00 low one</p>' };
  const [storedText, storedHtml] = [toStored(lone.text), toStored(lone.html)];
  await w.p.db('received_emails').where({ id }).update({
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
  const plain = await w.deliverOne(`inbox@${domain}`, {
    from: 'sender@sender.test',
    subject: 'plain',
    text: 'nothing odd',
    html: '<p>nothing odd</p>',
  });
  t.like(await w.p.db('received_emails').where({ id: plain }).first('text', 'text_exact', 'html_exact'), {
    text: 'nothing odd',
    text_exact: null,
    html_exact: null,
  });
});

test('a dropped message is listed with its reason, no body and no attachments; raw is a link only while the source is kept', async (t) => {
  const { team, domain } = await w.receivingTeam();
  const id = await w.send({
    from: 'a@sender.test',
    to: `x@${domain}`,
    subject: 'late',
    text: 'body',
    attachments: [{ filename: 'a.txt', content: 'a' }],
  });
  // The domain stopped receiving between the 250 and the job: no mailbox takes it any more.
  await w.p.db('domains').where({ name: domain }).update({ receiving: 'disabled' });
  t.is(await processReceived(w.deps, id), 'processed');
  const [row] = (await w.p.request('GET', '/emails/receiving', { key: team.key })).body.data;
  t.like(row, { id, subject: 'late', dropped_reason: 'no_mailbox', attachments: [] });
  const e = (await w.p.request('GET', `/emails/receiving/${id}`, { key: team.key })).body;
  t.like(e, { html: null, text: null, dropped_reason: 'no_mailbox', attachments: [] });
  // Whether the receive job keeps a dropped message's source is its policy (only parse_failed must stay
  // downloadable); the API offers a link exactly when the source is there.
  // (A small message's source is kept in received_raw: shared/receiving/raw.ts.)
  const link = (await w.p.request('GET', `/emails/receiving/${id}`, { key: team.key })).body.raw;
  const source = { message_id: id, team_id: team.id, bytes: Buffer.from('Subject: kept\r\n\r\nx\r\n') };
  await w.p.db('received_raw').insert(source).onConflict('message_id').merge();
  const kept = (await w.p.request('GET', `/emails/receiving/${id}`, { key: team.key })).body.raw;
  t.is(await (await w.download(kept.download_url)).text(), 'Subject: kept\r\n\r\nx\r\n');
  await w.p.db('received_raw').where({ message_id: id }).delete();
  t.is((await w.p.request('GET', `/emails/receiving/${id}`, { key: team.key })).body.raw, null);
  t.is((await w.download(kept.download_url)).status, 404, 'a link to a source that is gone is refused');
  if (link) t.is((await w.download(link.download_url)).status, 404);
});

test('a restricted sending_access key reaches no receiving route; other teams see nothing', async (t) => {
  const { team, domain } = await w.receivingTeam();
  const id = await w.deliverOne(`x@${domain}`, {
    subject: 's',
    text: 'x',
    attachments: [{ filename: 'a.txt', content: 'a' }],
  });
  const [att] = (await w.p.request('GET', `/emails/receiving/${id}/attachments`, { key: team.key })).body.data;
  const created = await w.p.request('POST', '/api-keys', {
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
    isError(t, await w.p.request(method, path, { key: sending }), 401, 'restricted_api_key');
  const other = await w.p.createTeam();
  t.deepEqual((await w.p.request('GET', '/emails/receiving', { key: other.key })).body.data, []);
  for (const [method, path] of routes.slice(1))
    isError(t, await w.p.request(method, path, { key: other.key }), 404, 'not_found');
  // Nothing was deleted on the way.
  t.is((await w.p.request('GET', `/emails/receiving/${id}`, { key: team.key })).status, 200);
});

test('received and sent ids are separate: GET /emails/{id} and its share link do not find a received id, nor the reverse', async (t) => {
  const { team, domain } = await w.receivingTeam();
  const id = await w.deliverOne(`x@${domain}`, { subject: 's', text: 'x' });
  isError(t, await w.p.request('GET', `/emails/${id}`, { key: team.key }), 404, 'not_found');
  isError(t, await w.p.request('POST', `/emails/${id}/share`, { key: team.key, body: {} }), 404, 'not_found');
  isError(t, await w.p.request('GET', `/emails/${id}/attachments`, { key: team.key }), 404, 'not_found');
  const managed = (await w.p.request('GET', '/domains', { key: team.key })).body.data.find(
    (d: { managed: boolean }) => d.managed,
  ).name;
  const sent = await w.p.request('POST', '/emails', {
    key: team.key,
    body: {
      from: `me@${managed}`,
      to: `delivered@${w.p.config.SIMULATOR_DOMAIN}`,
      subject: 'sent',
      text: 'x',
      scheduled_at: 'in 1 hour',
    },
  });
  t.is(sent.status, 200, sent.text);
  isError(t, await w.p.request('GET', `/emails/receiving/${sent.body.id}`, { key: team.key }), 404, 'not_found');
  isError(t, await w.p.request('DELETE', `/emails/receiving/${sent.body.id}`, { key: team.key }), 404, 'not_found');
  t.is((await w.p.request('GET', `/emails/${sent.body.id}`, { key: team.key })).status, 200);
});

test('the official resend SDK reads received mail unchanged: list, get, attachments', async (t) => {
  const { team, domain } = await w.receivingTeam();
  const id = await w.deliverOne(`sdk@${domain}`, {
    subject: 'via sdk',
    text: 'x',
    attachments: [{ filename: 'a.txt', content: 'a' }],
  });
  const resend = new Resend(team.key, { baseUrl: w.p.url } as never);
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
  t.is((await w.download(one.data!.download_url)).status, 200);
  const missing = await resend.emails.receiving.get(newId());
  t.is(missing.error?.name, 'not_found');
});
