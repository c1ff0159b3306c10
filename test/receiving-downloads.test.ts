// The receiving API's files: attachments with signed links, the public downloads behind them (raw.eml too),
// every refusal the same 404, and delete with its blobs.
import test from 'ava';
import type { Platform } from './helpers/platform.ts';
import { isError } from './helpers/http.ts';
import { BASE, PDF, REFUSED, ids, local, startReceivingWorld, type ReceivingWorld } from './helpers/receiving-world.ts';
import { newId } from '../shared/ids.ts';
import { RAW_INLINE_MAX_BYTES } from '../shared/receiving/raw.ts';
import { storedBytes } from './helpers/receive-job.ts';
import { DOWNLOAD_LINK_TTL_SECONDS, linkKey, nowSeconds, signLink } from '../shared/links/signed.ts';

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
const deliver = (to: string[], mail: Record<string, unknown>) => w.deliver(to, mail);
const deliverOne = (to: string, mail: Record<string, unknown>) => w.deliverOne(to, mail);
const download = (url: string, prefix = '') => w.download(url, prefix);

test('attachments: in part order with fresh signed links; one attachment adds object; cursors are attachment ids', async (t) => {
  const { team, domain } = await receivingTeam();
  const id = await deliverOne(`files@${domain}`, {
    subject: 'files',
    text: 'see attached',
    attachments: ['a', 'b', 'c'].map((n) => ({ filename: `${n}.txt`, content: `content ${n}` })),
  });
  const before = nowSeconds();
  const res = await p.request('GET', `/emails/receiving/${id}/attachments`, { key: team.key });
  t.is(res.status, 200, res.text);
  const rows = await p.db('received_attachments').where({ email_id: id }).orderBy('position');
  t.deepEqual(
    ids(res),
    rows.map((r) => r.id),
  );
  t.deepEqual(
    res.body.data.map((a: { filename: string }) => a.filename),
    ['a.txt', 'b.txt', 'c.txt'],
  );
  const [a, b, c] = res.body.data;
  t.deepEqual(Object.keys(a).sort(), [
    'content_disposition',
    'content_type',
    'download_url',
    'expires_at',
    'filename',
    'id',
    'size',
  ]);
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
  isError(
    t,
    await p.request('GET', `/emails/receiving/${id}/attachments?after=${newId()}`, { key: team.key }),
    422,
    'validation_error',
  );
  isError(
    t,
    await p.request('GET', `/emails/receiving/${id}/attachments/${newId()}`, { key: team.key }),
    404,
    'not_found',
  );
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
    subject: 'files',
    text: 'x',
    attachments: [
      { filename: 'report.pdf', content: PDF, contentType: 'application/pdf' },
      { filename: 'page.html', content: html, contentType: 'text/html' },
      { filename: 'image.svg', content: svg, contentType: 'image/svg+xml' },
      { filename: 'odd.bin', content: Buffer.from([0, 1, 2]), contentType: 'application/x-whatever' },
      { filename: 'Résumé "v2".txt', content: 'hi', contentType: 'text/plain' },
    ],
  });
  const list = (await p.request('GET', `/emails/receiving/${id}/attachments`, { key: team.key })).body.data;
  const expected: [Buffer, string][] = [
    [PDF, 'application/pdf'],
    [html, 'application/octet-stream'],
    [svg, 'application/octet-stream'],
    [Buffer.from([0, 1, 2]), 'application/octet-stream'],
    [Buffer.from('hi'), 'text/plain'],
  ];
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
  t.is(
    (await download(list[0].download_url)).headers.get('content-disposition'),
    'attachment; filename="report.pdf"; filename*=UTF-8\'\'report.pdf',
  );
  t.is(
    (await download(list[4].download_url)).headers.get('content-disposition'),
    'attachment; filename="Resume _v2_.txt"; filename*=UTF-8\'\'R%C3%A9sum%C3%A9%20%22v2%22.txt',
  );
});

test('raw.eml: the message exactly as the MX stored it, as a download, without a key', async (t) => {
  const { team, domain } = await receivingTeam();
  const raw = `From: a@sender.test\r\nTo: r@${domain}\r\nSubject: raw one\r\nContent-Type: text/html\r\n\r\n<script>alert(1)</script>\r\n`;
  const id = await deliverOne(`r@${domain}`, { raw });
  const e = (await p.request('GET', `/emails/receiving/${id}`, { key: team.key })).body;
  const stored = await storedBytes(p, id);
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

test('every refused download is the same 404: expired, tampered, another object, kind or team, deleted', async (t) => {
  const { team, domain } = await receivingTeam();
  const other = await receivingTeam();
  const id = await deliverOne(`x@${domain}`, {
    subject: 's',
    text: 'x',
    attachments: [
      { filename: 'a.txt', content: 'a' },
      { filename: 'b.txt', content: 'b' },
    ],
  });
  const foreignId = await deliverOne(`x@${other.domain}`, {
    subject: 's',
    text: 'x',
    attachments: [{ filename: 'f.txt', content: 'f' }],
  });
  const [a, b] = (await p.request('GET', `/emails/receiving/${id}/attachments`, { key: team.key })).body.data;
  const [foreign] = (await p.request('GET', `/emails/receiving/${foreignId}/attachments`, { key: other.team.key })).body
    .data;
  const raw = (await p.request('GET', `/emails/receiving/${id}`, { key: team.key })).body.raw.download_url;
  const foreignRaw = (await p.request('GET', `/emails/receiving/${foreignId}`, { key: other.team.key })).body.raw
    .download_url;
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
    ["another attachment's token", path + new URL(b.download_url).search],
    ['this token on another attachment', `${new URL(b.download_url).pathname}?expires=${expires}&token=${token}`],
    [
      "a sent attachment's kind",
      `${path}?expires=${expires}&token=${sign({ kind: 'email_attachment', expires: Number(expires) })}`,
    ],
    [
      'signed for another team',
      `${path}?expires=${expires}&token=${sign({ teamId: other.team.id, expires: Number(expires) })}`,
    ],
    [
      "another team's attachment under this email",
      `/emails/receiving/${id}/attachments/${foreign.id}/download${new URL(foreign.download_url).search}`,
    ],
    [
      "this attachment under another team's email",
      `/emails/receiving/${foreignId}/attachments/${a.id}/download?expires=${expires}&token=${token}`,
    ],
    ['unknown attachment', `/emails/receiving/${id}/attachments/${newId()}/download?expires=${expires}&token=${token}`],
    ['malformed ids', `/emails/receiving/nope/attachments/also-nope/download?expires=${expires}&token=${token}`],
    ['no query', path],
    ['no token', `${path}?expires=${expires}`],
    ['garbage expires', `${path}?expires=soon&token=${token}`],
    ['repeated token', `${path}?expires=${expires}&token=${token}&token=${token}`],
    ['raw: tampered', `${rawPath}?expires=${rawExpires}&token=${flip(rawToken, 3)}`],
    ["raw: an attachment's token", `${rawPath}?expires=${expires}&token=${token}`],
    ['raw: the raw token on an attachment', `${path}?expires=${rawExpires}&token=${rawToken}`],
    [
      "raw: another team's message with this token",
      `${new URL(foreignRaw).pathname}?expires=${rawExpires}&token=${rawToken}`,
    ],
    [
      'raw: expired (valid signature)',
      `${rawPath}?expires=${past}&token=${signLink(key, { kind: 'received_raw', teamId: team.id, objectId: id, expires: past })}`,
    ],
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

test("delete: the record, attachments and raw blobs go, the size leaves the allowance; another team's copy stays", async (t) => {
  const first = await receivingTeam();
  const second = await receivingTeam();
  // One SMTP transaction for two teams: one copy (row and raw blob) each.
  const [mine, theirs] = await deliver([`x@${first.domain}`, `y@${second.domain}`], {
    subject: 'shared',
    text: 'x',
    attachments: [
      { filename: 'a.txt', content: 'a' },
      { filename: 'b.txt', content: 'b' },
    ],
  });
  t.truthy(theirs);
  const usage = async (teamId: string) =>
    Number((await p.db('received_messages').where({ team_id: teamId }).sum('size as s').first())?.s ?? 0);
  const message = await p.db('received_messages').where({ id: mine }).first();
  const blobKeys = await p.db('received_attachments').where({ email_id: mine }).pluck('blob_key');
  t.is(blobKeys.length, 2);
  for (const k of blobKeys) t.not(await p.deps.blobs.get(k), null);
  t.not(await storedBytes(p, mine), null, 'its raw source (received_raw)');
  const usedBefore = await usage(first.team.id);
  t.true(usedBefore >= message.size && message.size > 0);
  const theirsRaw = (await p.request('GET', `/emails/receiving/${theirs}`, { key: second.team.key })).body.raw
    .download_url;

  isError(t, await p.request('DELETE', `/emails/receiving/${mine}`, { key: second.team.key }), 404, 'not_found');
  const res = await p.request('DELETE', `/emails/receiving/${mine}`, { key: first.team.key });
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body, { object: 'email', id: mine, deleted: true });
  for (const table of ['received_messages', 'received_emails'])
    t.is((await p.db(table).where({ id: mine })).length, 0, table);
  t.is((await p.db('received_attachments').where({ email_id: mine })).length, 0);
  for (const k of blobKeys) t.is(await p.deps.blobs.get(k), null, k);
  t.is((await p.db('received_raw').where({ message_id: mine })).length, 0, 'its raw source went with the row');
  t.is(await usage(first.team.id), usedBefore - message.size);
  isError(t, await p.request('GET', `/emails/receiving/${mine}`, { key: first.team.key }), 404, 'not_found');
  isError(t, await p.request('DELETE', `/emails/receiving/${mine}`, { key: first.team.key }), 404, 'not_found');
  t.false(ids(await p.request('GET', '/emails/receiving', { key: first.team.key })).includes(mine));
  // The other team's copy of the same message is untouched.
  t.is((await p.request('GET', `/emails/receiving/${theirs}`, { key: second.team.key })).status, 200);
  t.is((await download(theirsRaw)).status, 200);
  t.is(
    (await p.request('GET', `/emails/receiving/${theirs}/attachments`, { key: second.team.key })).body.data.length,
    2,
  );
});

test('a blob another row still names is kept when a received email is deleted', async (t) => {
  const { team, domain } = await receivingTeam();
  // Past RAW_INLINE_MAX_BYTES: the MX keeps these in the blob store.
  const text = 'x'.repeat(RAW_INLINE_MAX_BYTES);
  const [a] = await deliver([`x@${domain}`], { subject: 'a', text });
  const [b] = await deliver([`x@${domain}`], { subject: 'b', text });
  // Should two rows ever share one raw blob, deleting one must not take the other's bytes.
  const shared = (await p.db('received_messages').where({ id: b }).first()).raw_blob_key;
  await p.db('received_messages').where({ id: a }).update({ raw_blob_key: shared });
  t.is((await p.request('DELETE', `/emails/receiving/${a}`, { key: team.key })).status, 200);
  t.not(await p.deps.blobs.get(shared), null);
  const raw = (await p.request('GET', `/emails/receiving/${b}`, { key: team.key })).body.raw;
  t.is((await download(raw.download_url)).status, 200);
});
