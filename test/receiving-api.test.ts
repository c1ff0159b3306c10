// The receiving API on mail the real MX accepted over SMTP and the real receive job processed: list and search,
// date windows, pagination, the full email, attachments with signed links and the public downloads behind them
// (raw.eml too), delete with its blobs, and who may reach what.
import test from 'ava';
import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import type { SMTPServer } from 'smtp-server';
import { Resend } from 'resend';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { isError } from './helpers/http.ts';
import { createMxServer } from '../inbound/mx/server.ts';
import { processReceived, type ReceiveDeps } from '../inbound/receive/job.ts';
import { tlsCredentials } from '../shared/tls/certificate.ts';
import { secretsKey } from '../shared/secrets.ts';
import { newId } from '../shared/ids.ts';
import { DOWNLOAD_LINK_TTL_SECONDS, linkKey, nowSeconds, signLink } from '../shared/links/signed.ts';

const BASE = 'https://mail.example-platform.test';
const REFUSED = 'This link is invalid or has expired.';

let p: Platform;
let mx: SMTPServer;
let port: number;
let deps: ReceiveDeps;
/** Every message id the MX stored, keyed by the first (the one its 250 names). */
const stored = new Map<string, string[]>();

test.before(async () => {
  p = await startPlatform({ PUBLIC_BASE_URL: BASE });
  deps = { db: p.db, blobs: p.deps.blobs, log: p.deps.log, secrets: secretsKey(p.config) };
  mx = createMxServer({
    ...deps, config: p.config, tls: await tlsCredentials({}, 'mx.test'),
    enqueueReceive: async (ids) => void stored.set(ids[0], ids),
  });
  await new Promise<void>((resolve) => mx.listen(0, '127.0.0.1', () => resolve()));
  port = (mx.server.address() as AddressInfo).port;
});
test.after.always(async () => {
  await new Promise<void>((resolve) => (mx ? mx.close(() => resolve()) : resolve()));
  await p?.close();
});

/** A team with a verified receiving domain of its own. */
async function receivingTeam(): Promise<{ team: TestTeam; domain: string }> {
  const team = await p.createTeam();
  const domain = `rx-${Math.random().toString(36).slice(2, 10)}.test`;
  await p.db('domains').insert({ id: newId(), team_id: team.id, name: domain, status: 'verified', receiving: 'enabled' });
  return { team, domain };
}

/** Delivers over SMTP to the MX, runs the receive job on every copy stored, answers the copies' ids. */
async function deliver(to: string[], mail: Record<string, unknown>): Promise<string[]> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, tls: { rejectUnauthorized: false } });
  const info = await transport.sendMail({ from: 'alice@sender.test', ...mail, envelope: { from: 'alice@sender.test', to } });
  const ids = stored.get(/stored as (\S+)/.exec(info.response)![1])!;
  for (const id of ids) if ((await processReceived(deps, id)) !== 'processed') throw new Error(`not processed: ${id}`);
  return ids;
}
const deliverOne = async (to: string, mail: Record<string, unknown>) => (await deliver([to], mail))[0];

/** The path and query of a link (the test server does not listen at PUBLIC_BASE_URL). */
const local = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};
const download = (url: string, prefix = '') => fetch(p.url + prefix + local(url), { headers: { 'user-agent': 'mail-client/1.0' } });
const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((e) => e.id);

const PDF = Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\n%%EOF\n', 'latin1');

test('retrieve: the full received email, headers as an object, raw as a fresh link, attachments without links', async (t) => {
  const { team, domain } = await receivingTeam();
  const id = await deliverOne(`orders@${domain}`, {
    from: 'Alice Example <alice@sender.test>', to: `Orders <orders@${domain}>`, cc: 'cc@other.test', bcc: 'hidden@other.test',
    replyTo: 'reply@sender.test', subject: 'Your order ✓', messageId: '<m1@sender.test>', text: 'plain body', html: '<p>html <img src="cid:logo@x"></p>',
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
  t.deepEqual(Object.keys(e).sort(), ['attachments', 'bcc', 'cc', 'created_at', 'dropped_reason', 'from', 'headers', 'html', 'id', 'message_id',
    'object', 'raw', 'received_for', 'reply_to', 'subject', 'text', 'to']);
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
  t.deepEqual(e.attachments.map((a: Record<string, unknown>) => Object.keys(a).sort()), [
    ['content_disposition', 'content_id', 'content_type', 'filename', 'id', 'size'],
    ['content_disposition', 'content_type', 'filename', 'id', 'size'],
  ]);
  t.like(e.attachments[0], { filename: 'logo.png', content_type: 'image/png', content_disposition: 'inline', content_id: 'logo@x', size: 3 });
  t.like(e.attachments[1], { filename: 'invoice.pdf', content_type: 'application/pdf', content_disposition: 'attachment', size: PDF.length });
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
  for (let i = 0; i < 5; i++) sent.push(await deliverOne(`in@${domain}`, { subject: `n${i}`, text: 'x', attachments: i === 0 ? [{ filename: 'a.txt', content: 'a' }] : [] }));
  const newest = [...sent].reverse();
  const all = await p.request('GET', '/emails/receiving', { key: team.key });
  t.is(all.status, 200, all.text);
  t.is(all.body.object, 'list');
  t.false(all.body.has_more);
  t.deepEqual(ids(all), newest);
  t.deepEqual(Object.keys(all.body.data[0]).sort(), ['attachments', 'bcc', 'cc', 'created_at', 'dropped_reason', 'from', 'id', 'message_id', 'reply_to', 'subject', 'to']);
  t.deepEqual(all.body.data[4].attachments.map((a: { filename: string }) => a.filename), ['a.txt']);
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
  isError(t, await p.request('GET', `/emails/receiving?after=${newest[0]}&before=${newest[1]}`, { key: team.key }), 422, 'validation_error');
  isError(t, await p.request('GET', '/emails/receiving?limit=101', { key: team.key }), 422, 'validation_error');
});

test('search: a case-insensitive substring of subject, sender name or address, or any recipient; % and _ are literal', async (t) => {
  const { team, domain } = await receivingTeam();
  const invoice = await deliverOne(`billing@${domain}`, { from: 'Carol Jones <carol@acme.test>', to: `Billing <billing@${domain}>`, subject: 'Invoice 100% paid', text: 'x' });
  const underscore = await deliverOne(`sales@${domain}`, { from: 'dave@shop.test', to: `sales@${domain}`, cc: 'Eve Watcher <eve@watch.test>', subject: 'order_42 shipped', text: 'x' });
  // Only in the envelope: a blind copy names nobody in the headers.
  const blind = await deliverOne(`secret-desk@${domain}`, { from: 'frank@plain.test', to: 'someone@elsewhere.test', subject: 'Hello', text: 'x' });
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
  isError(t, await p.request('GET', `/emails/receiving?search=${'a'.repeat(201)}`, { key: team.key }), 422, 'validation_error');
  t.is((await p.request('GET', `/emails/receiving?search=${'a'.repeat(200)}`, { key: team.key })).status, 200);
});

test('start_date and end_date are inclusive; a date alone covers its whole UTC day', async (t) => {
  const { team, domain } = await receivingTeam();
  const times = ['2026-03-01T23:59:59.999Z', '2026-03-02T00:00:00.000Z', '2026-03-02T12:00:00.000Z', '2026-03-02T23:59:59.999Z', '2026-03-03T00:00:00.000Z'];
  const made: string[] = [];
  for (const at of times) {
    const id = await deliverOne(`d@${domain}`, { subject: at, text: 'x' });
    // The MX stamps the arrival time; the window is tested at fixed instants around its edges.
    await p.db('received_emails').where({ id }).update({ created_at: new Date(at) });
    made.push(id);
  }
  const window = async (query: string) => {
    const res = await p.request('GET', `/emails/receiving?${query}`, { key: team.key });
    t.is(res.status, 200, res.text);
    return ids(res).map((id) => times[made.indexOf(id)]).sort();
  };
  t.deepEqual(await window('start_date=2026-03-02T00:00:00.000Z&end_date=2026-03-02T12:00:00.000Z'), times.slice(1, 3), 'both instants inclusive');
  t.deepEqual(await window('start_date=2026-03-02&end_date=2026-03-02'), times.slice(1, 4), 'one whole day');
  t.deepEqual(await window('start_date=2026-03-02T12:00:00.000Z'), times.slice(2));
  t.deepEqual(await window('end_date=2026-03-01'), times.slice(0, 1));
  t.deepEqual(await window('start_date=2026-03-02T13:00:00%2B01:00&end_date=2026-03-02T12:00:00Z'), times.slice(2, 3), 'an offset is honoured');
  t.deepEqual(await window('start_date=2026-03-02T12:00:00.000Z&end_date=2026-03-02T12:00:00.000Z'), times.slice(2, 3));
  t.deepEqual(await window(`start_date=2026-03-02&search=${encodeURIComponent('T12:')}`), times.slice(2, 3), 'dates and search together');
  isError(t, await p.request('GET', '/emails/receiving?start_date=2026-03-03&end_date=2026-03-02', { key: team.key }), 422, 'validation_error');
  isError(t, await p.request('GET', '/emails/receiving?start_date=yesterday', { key: team.key }), 422, 'validation_error');
  isError(t, await p.request('GET', '/emails/receiving?end_date=2026-13-01', { key: team.key }), 422, 'validation_error');
});

test('attachments: in part order with fresh signed links; one attachment adds object; cursors are attachment ids', async (t) => {
  const { team, domain } = await receivingTeam();
  const id = await deliverOne(`files@${domain}`, {
    subject: 'files', text: 'see attached',
    attachments: ['a', 'b', 'c'].map((n) => ({ filename: `${n}.txt`, content: `content ${n}` })),
  });
  const before = nowSeconds();
  const res = await p.request('GET', `/emails/receiving/${id}/attachments`, { key: team.key });
  t.is(res.status, 200, res.text);
  const rows = await p.db('received_attachments').where({ email_id: id }).orderBy('position');
  t.deepEqual(ids(res), rows.map((r) => r.id));
  t.deepEqual(res.body.data.map((a: { filename: string }) => a.filename), ['a.txt', 'b.txt', 'c.txt']);
  const [a, b, c] = res.body.data;
  t.deepEqual(Object.keys(a).sort(), ['content_disposition', 'content_type', 'download_url', 'expires_at', 'filename', 'id', 'size']);
  t.true(a.download_url.startsWith(`${BASE}/emails/receiving/${id}/attachments/${a.id}/download?expires=`));
  const expires = Number(new URL(a.download_url).searchParams.get('expires'));
  t.true(expires >= before + DOWNLOAD_LINK_TTL_SECONDS && expires <= nowSeconds() + DOWNLOAD_LINK_TTL_SECONDS);
  t.is(a.expires_at, new Date(expires * 1000).toISOString());

  const one = await p.request('GET', `/emails/receiving/${id}/attachments/${b.id}`, { key: team.key });
  t.is(one.status, 200, one.text);
  t.is(one.body.object, 'attachment');
  t.like(one.body, { id: b.id, filename: 'b.txt', size: b.size });
  t.true(one.body.download_url.includes(`/attachments/${b.id}/download?`));

  const page1 = await p.request('GET', `/emails/receiving/${id}/attachments?limit=2`, { key: team.key });
  t.deepEqual(ids(page1), [a.id, b.id]);
  t.true(page1.body.has_more);
  const page2 = await p.request('GET', `/emails/receiving/${id}/attachments?limit=2&after=${b.id}`, { key: team.key });
  t.deepEqual(ids(page2), [c.id]);
  t.false(page2.body.has_more);
  const back = await p.request('GET', `/emails/receiving/${id}/attachments?limit=1&before=${c.id}`, { key: team.key });
  t.deepEqual(ids(back), [b.id]);
  t.true(back.body.has_more);
  isError(t, await p.request('GET', `/emails/receiving/${id}/attachments?after=${newId()}`, { key: team.key }), 422, 'validation_error');
  isError(t, await p.request('GET', `/emails/receiving/${id}/attachments/${newId()}`, { key: team.key }), 404, 'not_found');
  // A part whose bytes were refused storage is listed with its size and no link.
  await p.deps.blobs.delete(rows[2].blob_key);
  const without = (await p.request('GET', `/emails/receiving/${id}/attachments`, { key: team.key })).body.data[2];
  t.deepEqual(Object.keys(without).sort(), ['content_disposition', 'content_type', 'filename', 'id', 'size']);
  t.is(without.size, c.size);
});

test('downloads: the exact bytes as an attachment, nosniff; html, svg and unknown types as application/octet-stream', async (t) => {
  const { team, domain } = await receivingTeam();
  const html = Buffer.from('<script>alert(document.cookie)</script>');
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
  const id = await deliverOne(`files@${domain}`, {
    subject: 'files', text: 'x',
    attachments: [
      { filename: 'report.pdf', content: PDF, contentType: 'application/pdf' },
      { filename: 'page.html', content: html, contentType: 'text/html' },
      { filename: 'image.svg', content: svg, contentType: 'image/svg+xml' },
      { filename: 'odd.bin', content: Buffer.from([0, 1, 2]), contentType: 'application/x-whatever' },
      { filename: 'Résumé "v2".txt', content: 'hi', contentType: 'text/plain' },
    ],
  });
  const list = (await p.request('GET', `/emails/receiving/${id}/attachments`, { key: team.key })).body.data;
  const expected: [Buffer, string][] = [[PDF, 'application/pdf'], [html, 'application/octet-stream'], [svg, 'application/octet-stream'],
    [Buffer.from([0, 1, 2]), 'application/octet-stream'], [Buffer.from('hi'), 'text/plain']];
  for (const [i, a] of list.entries()) {
    for (const prefix of ['', '/api/v1']) {
      const res = await download(a.download_url, prefix);
      t.is(res.status, 200, a.filename);
      t.deepEqual(Buffer.from(await res.arrayBuffer()), expected[i][0], a.filename);
      t.is(res.headers.get('content-type'), expected[i][1], a.filename);
      t.regex(res.headers.get('content-disposition') ?? '', /^attachment; filename="/, a.filename);
      t.is(res.headers.get('x-content-type-options'), 'nosniff');
      t.regex(res.headers.get('cache-control') ?? '', /no-store/);
    }
  }
  t.is((await download(list[0].download_url)).headers.get('content-disposition'), 'attachment; filename="report.pdf"; filename*=UTF-8\'\'report.pdf');
  t.is((await download(list[4].download_url)).headers.get('content-disposition'),
    'attachment; filename="Resume _v2_.txt"; filename*=UTF-8\'\'R%C3%A9sum%C3%A9%20%22v2%22.txt');
});

test('raw.eml: the message exactly as the MX stored it, as a download, without a key', async (t) => {
  const { team, domain } = await receivingTeam();
  const raw = `From: a@sender.test\r\nTo: r@${domain}\r\nSubject: raw one\r\nContent-Type: text/html\r\n\r\n<script>alert(1)</script>\r\n`;
  const id = await deliverOne(`r@${domain}`, { raw });
  const e = (await p.request('GET', `/emails/receiving/${id}`, { key: team.key })).body;
  const stored = await p.deps.blobs.get((await p.db('received_messages').where({ id }).first()).raw_blob_key);
  for (const prefix of ['', '/api/v1']) {
    const res = await download(e.raw.download_url, prefix);
    t.is(res.status, 200);
    t.deepEqual(Buffer.from(await res.arrayBuffer()), stored);
    t.is(res.headers.get('content-type'), 'message/rfc822');
    t.is(res.headers.get('content-disposition'), 'attachment; filename="raw.eml"; filename*=UTF-8\'\'raw.eml');
    t.is(res.headers.get('x-content-type-options'), 'nosniff');
  }
  t.true(stored!.toString().includes('<script>alert(1)</script>'));
});

test('a dropped message is listed with its reason, no body and no attachments; raw is a link only while the source is kept', async (t) => {
  const { team, domain } = await receivingTeam();
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, tls: { rejectUnauthorized: false } });
  const info = await transport.sendMail({ from: 'a@sender.test', to: `x@${domain}`, subject: 'late', text: 'body', attachments: [{ filename: 'a.txt', content: 'a' }] });
  const id = /stored as (\S+)/.exec(info.response)![1];
  // The domain stopped receiving between the 250 and the job: no mailbox takes it any more.
  await p.db('domains').where({ name: domain }).update({ receiving: 'disabled' });
  t.is(await processReceived(deps, id), 'processed');
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

test('every refused download is the same 404: expired, tampered, another object, kind or team, deleted', async (t) => {
  const { team, domain } = await receivingTeam();
  const other = await receivingTeam();
  const id = await deliverOne(`x@${domain}`, { subject: 's', text: 'x', attachments: [{ filename: 'a.txt', content: 'a' }, { filename: 'b.txt', content: 'b' }] });
  const foreignId = await deliverOne(`x@${other.domain}`, { subject: 's', text: 'x', attachments: [{ filename: 'f.txt', content: 'f' }] });
  const [a, b] = (await p.request('GET', `/emails/receiving/${id}/attachments`, { key: team.key })).body.data;
  const [foreign] = (await p.request('GET', `/emails/receiving/${foreignId}/attachments`, { key: other.team.key })).body.data;
  const raw = (await p.request('GET', `/emails/receiving/${id}`, { key: team.key })).body.raw.download_url;
  const foreignRaw = (await p.request('GET', `/emails/receiving/${foreignId}`, { key: other.team.key })).body.raw.download_url;
  const key = linkKey(p.config);
  const u = new URL(a.download_url);
  const path = u.pathname;
  const expires = u.searchParams.get('expires')!;
  const token = u.searchParams.get('token')!;
  const rawPath = new URL(raw).pathname;
  const rawToken = new URL(raw).searchParams.get('token')!;
  const rawExpires = new URL(raw).searchParams.get('expires')!;
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  const past = nowSeconds() - 1;
  const far = nowSeconds() + DOWNLOAD_LINK_TTL_SECONDS + 120;
  const sign = (over: { kind?: string; teamId?: string; objectId?: string; expires: number }) =>
    signLink(key, { kind: 'received_attachment', teamId: team.id, objectId: a.id, ...over });

  const reference = await p.request('GET', `${path}?expires=${expires}&token=${flip(token, 5)}`);
  isError(t, reference, 404, 'not_found');
  t.is(reference.body.message, REFUSED);

  const refusals: [string, string][] = [
    ['tampered token', `${path}?expires=${expires}&token=${flip(token, token.length - 1)}`],
    ['expires changed', `${path}?expires=${Number(expires) + 1}&token=${token}`],
    ['expired (valid signature)', `${path}?expires=${past}&token=${sign({ expires: past })}`],
    ['beyond 15 minutes (valid signature)', `${path}?expires=${far}&token=${sign({ expires: far })}`],
    ['another attachment\'s token', path + new URL(b.download_url).search],
    ['this token on another attachment', `${new URL(b.download_url).pathname}?expires=${expires}&token=${token}`],
    ['a sent attachment\'s kind', `${path}?expires=${expires}&token=${sign({ kind: 'email_attachment', expires: Number(expires) })}`],
    ['signed for another team', `${path}?expires=${expires}&token=${sign({ teamId: other.team.id, expires: Number(expires) })}`],
    ['another team\'s attachment under this email', `/emails/receiving/${id}/attachments/${foreign.id}/download${new URL(foreign.download_url).search}`],
    ['this attachment under another team\'s email', `/emails/receiving/${foreignId}/attachments/${a.id}/download?expires=${expires}&token=${token}`],
    ['unknown attachment', `/emails/receiving/${id}/attachments/${newId()}/download?expires=${expires}&token=${token}`],
    ['malformed ids', `/emails/receiving/nope/attachments/also-nope/download?expires=${expires}&token=${token}`],
    ['no query', path],
    ['no token', `${path}?expires=${expires}`],
    ['garbage expires', `${path}?expires=soon&token=${token}`],
    ['repeated token', `${path}?expires=${expires}&token=${token}&token=${token}`],
    ['raw: tampered', `${rawPath}?expires=${rawExpires}&token=${flip(rawToken, 3)}`],
    ['raw: an attachment\'s token', `${rawPath}?expires=${expires}&token=${token}`],
    ['raw: the raw token on an attachment', `${path}?expires=${rawExpires}&token=${rawToken}`],
    ['raw: another team\'s message with this token', `${new URL(foreignRaw).pathname}?expires=${rawExpires}&token=${rawToken}`],
    ['raw: expired (valid signature)', `${rawPath}?expires=${past}&token=${signLink(key, { kind: 'received_raw', teamId: team.id, objectId: id, expires: past })}`],
    ['raw: unknown message', `/emails/receiving/${newId()}/raw/download?expires=${rawExpires}&token=${rawToken}`],
    ['raw: a sent email id', `/emails/receiving/nope/raw/download?expires=${rawExpires}&token=${rawToken}`],
  ];
  for (const [what, url] of refusals) {
    for (const prefix of ['', '/api/v1']) {
      const res = await p.request('GET', prefix + url);
      t.is(res.status, 404, `${what}: ${res.text}`);
      t.is(res.text, reference.text, what);
    }
  }
  // The genuine links work until the email is deleted, then are refused the same way.
  t.is((await p.request('GET', local(a.download_url))).status, 200);
  t.is((await p.request('GET', local(raw))).status, 200);
  t.is((await p.request('DELETE', `/emails/receiving/${id}`, { key: team.key })).status, 200);
  t.is((await p.request('GET', local(a.download_url))).text, reference.text, 'attachment of a deleted email');
  t.is((await p.request('GET', local(raw))).text, reference.text, 'raw of a deleted email');
});

test('delete: the record, attachments and raw blobs go, the size leaves the allowance; another team\'s copy stays', async (t) => {
  const first = await receivingTeam();
  const second = await receivingTeam();
  // One SMTP transaction for two teams: one copy (row and raw blob) each.
  const [mine, theirs] = await deliver([`x@${first.domain}`, `y@${second.domain}`], {
    subject: 'shared', text: 'x', attachments: [{ filename: 'a.txt', content: 'a' }, { filename: 'b.txt', content: 'b' }],
  });
  t.truthy(theirs);
  const usage = async (teamId: string) => Number((await p.db('received_messages').where({ team_id: teamId }).sum('size as s').first())?.s ?? 0);
  const message = await p.db('received_messages').where({ id: mine }).first();
  const blobKeys = [message.raw_blob_key, ...(await p.db('received_attachments').where({ email_id: mine }).pluck('blob_key'))];
  t.is(blobKeys.length, 3);
  for (const k of blobKeys) t.not(await p.deps.blobs.get(k), null);
  const usedBefore = await usage(first.team.id);
  t.true(usedBefore >= message.size && message.size > 0);
  const theirsRaw = (await p.request('GET', `/emails/receiving/${theirs}`, { key: second.team.key })).body.raw.download_url;

  isError(t, await p.request('DELETE', `/emails/receiving/${mine}`, { key: second.team.key }), 404, 'not_found');
  const res = await p.request('DELETE', `/emails/receiving/${mine}`, { key: first.team.key });
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body, { object: 'email', id: mine, deleted: true });
  for (const table of ['received_messages', 'received_emails']) t.is((await p.db(table).where({ id: mine })).length, 0, table);
  t.is((await p.db('received_attachments').where({ email_id: mine })).length, 0);
  for (const k of blobKeys) t.is(await p.deps.blobs.get(k), null, k);
  t.is(await usage(first.team.id), usedBefore - message.size);
  isError(t, await p.request('GET', `/emails/receiving/${mine}`, { key: first.team.key }), 404, 'not_found');
  isError(t, await p.request('DELETE', `/emails/receiving/${mine}`, { key: first.team.key }), 404, 'not_found');
  t.false(ids(await p.request('GET', '/emails/receiving', { key: first.team.key })).includes(mine));
  // The other team's copy of the same message is untouched.
  t.is((await p.request('GET', `/emails/receiving/${theirs}`, { key: second.team.key })).status, 200);
  t.is((await download(theirsRaw)).status, 200);
  t.is((await p.request('GET', `/emails/receiving/${theirs}/attachments`, { key: second.team.key })).body.data.length, 2);
});

test('a blob another row still names is kept when a received email is deleted', async (t) => {
  const { team, domain } = await receivingTeam();
  const [a] = await deliver([`x@${domain}`], { subject: 'a', text: 'x' });
  const [b] = await deliver([`x@${domain}`], { subject: 'b', text: 'x' });
  // Should two rows ever share one raw blob, deleting one must not take the other's bytes.
  const shared = (await p.db('received_messages').where({ id: b }).first()).raw_blob_key;
  await p.db('received_messages').where({ id: a }).update({ raw_blob_key: shared });
  t.is((await p.request('DELETE', `/emails/receiving/${a}`, { key: team.key })).status, 200);
  t.not(await p.deps.blobs.get(shared), null);
  const raw = (await p.request('GET', `/emails/receiving/${b}`, { key: team.key })).body.raw;
  t.is((await download(raw.download_url)).status, 200);
});

test('a restricted sending_access key reaches no receiving route; other teams see nothing', async (t) => {
  const { team, domain } = await receivingTeam();
  const id = await deliverOne(`x@${domain}`, { subject: 's', text: 'x', attachments: [{ filename: 'a.txt', content: 'a' }] });
  const [att] = (await p.request('GET', `/emails/receiving/${id}/attachments`, { key: team.key })).body.data;
  const created = await p.request('POST', '/api-keys', { key: team.key, body: { name: 'send only', permission: 'sending_access' } });
  t.is(created.status, 201, created.text);
  const sending = created.body.token;
  const routes: [string, string][] = [
    ['GET', '/emails/receiving'], ['GET', `/emails/receiving/${id}`], ['DELETE', `/emails/receiving/${id}`],
    ['GET', `/emails/receiving/${id}/attachments`], ['GET', `/emails/receiving/${id}/attachments/${att.id}`],
  ];
  for (const [method, path] of routes) isError(t, await p.request(method, path, { key: sending }), 401, 'restricted_api_key');
  const other = await p.createTeam();
  t.deepEqual((await p.request('GET', '/emails/receiving', { key: other.key })).body.data, []);
  for (const [method, path] of routes.slice(1)) isError(t, await p.request(method, path, { key: other.key }), 404, 'not_found');
  // Nothing was deleted on the way.
  t.is((await p.request('GET', `/emails/receiving/${id}`, { key: team.key })).status, 200);
});

test('received and sent ids are separate: GET /emails/{id} and its share link do not find a received id, nor the reverse', async (t) => {
  const { team, domain } = await receivingTeam();
  const id = await deliverOne(`x@${domain}`, { subject: 's', text: 'x' });
  isError(t, await p.request('GET', `/emails/${id}`, { key: team.key }), 404, 'not_found');
  isError(t, await p.request('POST', `/emails/${id}/share`, { key: team.key, body: {} }), 404, 'not_found');
  isError(t, await p.request('GET', `/emails/${id}/attachments`, { key: team.key }), 404, 'not_found');
  const managed = (await p.request('GET', '/domains', { key: team.key })).body.data.find((d: { managed: boolean }) => d.managed).name;
  const sent = await p.request('POST', '/emails', { key: team.key, body: {
    from: `me@${managed}`, to: `delivered@${p.config.SIMULATOR_DOMAIN}`, subject: 'sent', text: 'x', scheduled_at: 'in 1 hour',
  } });
  t.is(sent.status, 200, sent.text);
  isError(t, await p.request('GET', `/emails/receiving/${sent.body.id}`, { key: team.key }), 404, 'not_found');
  isError(t, await p.request('DELETE', `/emails/receiving/${sent.body.id}`, { key: team.key }), 404, 'not_found');
  t.is((await p.request('GET', `/emails/${sent.body.id}`, { key: team.key })).status, 200);
});

test('the official resend SDK reads received mail unchanged: list, get, attachments', async (t) => {
  const { team, domain } = await receivingTeam();
  const id = await deliverOne(`sdk@${domain}`, { subject: 'via sdk', text: 'x', attachments: [{ filename: 'a.txt', content: 'a' }] });
  const resend = new Resend(team.key, { baseUrl: p.url } as never);
  const list = await resend.emails.receiving.list({ limit: 10 });
  t.is(list.error, null, JSON.stringify(list.error));
  t.deepEqual(list.data?.data.map((e) => e.id), [id]);
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
