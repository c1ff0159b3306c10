// The public download behind a sent email's attachment links: the exact bytes, active content served inert, one
// 404 for every refusal, and no key needed but a User-Agent.
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { BASE, PDF, PNG, local, sendWith } from './helpers/attachments.ts';
import { fromNode, isError, nodeRequest } from './helpers/http.ts';
import { DOWNLOAD_LINK_TTL_SECONDS, linkKey, nowSeconds, signLink } from '../shared/links/signed.ts';
import { newId } from '../shared/ids.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform({ PUBLIC_BASE_URL: BASE });
});
test.after.always(async () => {
  await p?.close();
});

test('the download serves the exact bytes as an attachment, without a key, at / and /api/v1', async (t) => {
  const team = await p.createTeam();
  const id = await sendWith(p, team, [
    { filename: 'report.pdf', content: PDF, content_type: 'application/pdf' },
    { filename: 'Résumé "final" (v2) €.png', content: PNG },
    { content: Buffer.from('a,b\n1,2\n'), content_type: 'text/csv' },
  ]);
  const [pdf, png, csv] = (await p.request('GET', `/emails/${id}/attachments`, { key: team.key })).body.data;
  for (const prefix of ['', '/api/v1']) {
    const res = await fetch(p.url + prefix + local(pdf.download_url), { headers: { 'user-agent': 'mail-client/1.0' } });
    t.is(res.status, 200);
    t.deepEqual(Buffer.from(await res.arrayBuffer()), PDF);
    t.is(res.headers.get('content-type'), 'application/pdf');
    t.is(res.headers.get('content-disposition'), 'attachment; filename="report.pdf"; filename*=UTF-8\'\'report.pdf');
    t.is(res.headers.get('x-content-type-options'), 'nosniff');
    t.is(res.headers.get('content-length'), String(PDF.length));
    t.regex(res.headers.get('cache-control') ?? '', /no-store/);
  }
  const res = await fetch(p.url + local(png.download_url), { headers: { 'user-agent': 'mail-client/1.0' } });
  t.deepEqual(Buffer.from(await res.arrayBuffer()), PNG);
  t.is(res.headers.get('content-type'), 'image/png');
  // The ASCII fallback loses accents and quotes; filename* keeps the UTF-8 name (RFC 5987).
  t.is(
    res.headers.get('content-disposition'),
    'attachment; filename="Resume _final_ (v2) _.png"; filename*=UTF-8\'\'R%C3%A9sum%C3%A9%20%22final%22%20%28v2%29%20%E2%82%AC.png',
  );
  const noName = await fetch(p.url + local(csv.download_url), { headers: { 'user-agent': 'mail-client/1.0' } });
  t.is(await noName.text(), 'a,b\n1,2\n');
  t.is(noName.headers.get('content-type'), 'text/csv');
  t.is(noName.headers.get('content-disposition'), 'attachment; filename="attachment"; filename*=UTF-8\'\'attachment');
});

test('html, svg, scripts and unknown types are served as application/octet-stream', async (t) => {
  const team = await p.createTeam();
  const html = Buffer.from('<script>alert(document.cookie)</script>');
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
  const id = await sendWith(p, team, [
    { filename: 'page.html', content: html },
    { filename: 'image.svg', content: svg },
    { filename: 'app.js', content: Buffer.from('alert(1)'), content_type: 'text/javascript' },
    { filename: 'page.xhtml', content: html, content_type: 'application/xhtml+xml' },
    { filename: 'odd.bin', content: Buffer.from([0, 1, 2]), content_type: 'application/x-whatever' },
  ]);
  const list = (await p.request('GET', `/emails/${id}/attachments`, { key: team.key })).body.data;
  t.deepEqual(
    list.map((a: { content_type: string }) => a.content_type),
    ['text/html', 'image/svg+xml', 'text/javascript', 'application/xhtml+xml', 'application/x-whatever'],
  );
  for (const a of list) {
    const res = await fetch(p.url + local(a.download_url), { headers: { 'user-agent': 'mail-client/1.0' } });
    t.is(res.status, 200);
    t.is(res.headers.get('content-type'), 'application/octet-stream', a.filename);
    t.regex(res.headers.get('content-disposition') ?? '', /^attachment; /);
    t.is(res.headers.get('x-content-type-options'), 'nosniff');
    t.is((await res.arrayBuffer()).byteLength, a.size);
  }
});

test('every refused download is the same 404, whatever the reason', async (t) => {
  const team = await p.createTeam();
  const otherTeam = await p.createTeam();
  const id = await sendWith(p, team, [
    { filename: 'a.txt', content: Buffer.from('a') },
    { filename: 'b.txt', content: Buffer.from('b') },
  ]);
  const [a, b] = (await p.request('GET', `/emails/${id}/attachments`, { key: team.key })).body.data;
  const foreignEmail = await sendWith(p, otherTeam, [{ filename: 'f.txt', content: Buffer.from('f') }]);
  const [foreign] = (await p.request('GET', `/emails/${foreignEmail}/attachments`, { key: otherTeam.key })).body.data;
  const key = linkKey(p.config);
  const u = new URL(a.download_url);
  const path = u.pathname;
  const expires = u.searchParams.get('expires')!;
  const token = u.searchParams.get('token')!;
  const bTokenQuery = new URL(b.download_url).search;
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  const past = nowSeconds() - 1;
  const far = nowSeconds() + DOWNLOAD_LINK_TTL_SECONDS + 120;
  const sign = (over: { kind?: string; teamId?: string; objectId?: string; expires: number }) =>
    signLink(key, { kind: 'email_attachment', teamId: team.id, objectId: a.id, ...over });

  const reference = await p.request('GET', `${path}?expires=${expires}&token=${flip(token, 5)}`);
  isError(t, reference, 404, 'not_found');
  t.is(reference.body.message, 'This link is invalid or has expired.');

  const refusals: [string, string][] = [
    ['tampered token (last character)', `${path}?expires=${expires}&token=${flip(token, token.length - 1)}`],
    ['expires changed', `${path}?expires=${Number(expires) + 1}&token=${token}`],
    ["another attachment's token", path + bTokenQuery],
    ['this token on another attachment', `${new URL(b.download_url).pathname}?expires=${expires}&token=${token}`],
    ['expired (valid signature)', `${path}?expires=${past}&token=${sign({ expires: past })}`],
    ['beyond 15 minutes (valid signature)', `${path}?expires=${far}&token=${sign({ expires: far })}`],
    [
      'signed for another kind',
      `${path}?expires=${expires}&token=${sign({ kind: 'received_attachment', expires: Number(expires) })}`,
    ],
    [
      'signed for another team',
      `${path}?expires=${expires}&token=${sign({ teamId: otherTeam.id, expires: Number(expires) })}`,
    ],
    [
      "another team's attachment under this email",
      `/emails/${id}/attachments/${foreign.id}/download${new URL(foreign.download_url).search}`,
    ],
    [
      "this attachment under another team's email",
      `/emails/${foreignEmail}/attachments/${a.id}/download?expires=${expires}&token=${token}`,
    ],
    [
      "another team's link with this token",
      `${new URL(foreign.download_url).pathname}?expires=${expires}&token=${token}`,
    ],
    ['unknown attachment', `/emails/${id}/attachments/${newId()}/download?expires=${expires}&token=${token}`],
    ['malformed ids', `/emails/nope/attachments/also-nope/download?expires=${expires}&token=${token}`],
    ['no query', path],
    ['no token', `${path}?expires=${expires}`],
    ['no expires', `${path}?token=${token}`],
    ['empty values', `${path}?expires=&token=`],
    ['garbage expires', `${path}?expires=soon&token=${token}`],
    ['negative expires', `${path}?expires=-1&token=${token}`],
    ['exponent expires', `${path}?expires=1e12&token=${token}`],
    ['repeated token', `${path}?expires=${expires}&token=${token}&token=${token}`],
    ['garbage token', `${path}?expires=${expires}&token=%00%FF${'x'.repeat(300)}`],
    ['token with padding', `${path}?expires=${expires}&token=${token}=`],
  ];
  for (const [what, url] of refusals) {
    for (const prefix of ['', '/api/v1']) {
      const res = await p.request('GET', prefix + url);
      t.is(res.status, 404, `${what}: ${res.text}`);
      t.is(res.text, reference.text, what);
      t.regex(res.headers.get('content-type') ?? '', /^application\/json/, what);
    }
  }
  // The genuine link still works; once the attachment is gone it is refused the same way.
  t.is((await p.request('GET', `${path}?expires=${expires}&token=${token}`)).status, 200);
  const row = await p.db('email_attachments').where({ id: a.id }).first();
  await p.deps.blobs.delete(row.blob_key);
  t.is((await p.request('GET', `${path}?expires=${expires}&token=${token}`)).text, reference.text, 'bytes gone');
  await p.db('email_attachments').where({ id: a.id }).delete();
  t.is((await p.request('GET', `${path}?expires=${expires}&token=${token}`)).text, reference.text, 'row gone');
});

test('a download needs no Authorization header but a User-Agent', async (t) => {
  const team = await p.createTeam();
  const id = await sendWith(p, team, [{ filename: 'a.txt', content: Buffer.from('hi') }]);
  const [a] = (await p.request('GET', `/emails/${id}/attachments`, { key: team.key })).body.data;
  const bare = fromNode(await nodeRequest(p.url, { method: 'GET', path: local(a.download_url) }));
  isError(t, bare, 400, 'validation_error');
  t.regex(bare.body.message, /User-Agent/);
  const withAgent = await nodeRequest(p.url, {
    method: 'GET',
    path: local(a.download_url),
    headers: { 'user-agent': 'curl/8' },
  });
  t.is(withAgent.status, 200);
  t.is(withAgent.text, 'hi');
  // An Authorization header, even a bad one, changes nothing: the link is the credential.
  const keyed = await p.request('GET', local(a.download_url), { headers: { authorization: 'Bearer rk_nope' } });
  t.is(keyed.status, 200);
  // The list itself still needs a key of the team.
  isError(t, await p.request('GET', `/emails/${id}/attachments`), 401, 'missing_api_key');
  isError(
    t,
    await p.request('GET', `/emails/${id}/attachments`, { key: (await p.createTeam()).key }),
    404,
    'not_found',
  );
});
