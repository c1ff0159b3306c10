// A sent email's attachments: list and get with signed links, and the public download behind them.
import test from 'ava';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { fromNode, isError, nodeRequest } from './helpers/http.ts';
import {
  contentDisposition,
  DOWNLOAD_LINK_TTL_SECONDS,
  linkKey,
  nowSeconds,
  servedContentType,
  signLink,
  verifyLink,
} from '../shared/links/signed.ts';
import { newId } from '../shared/ids.ts';

const BASE = 'https://mail.example-platform.test';

let p: Platform;
test.before(async () => {
  p = await startPlatform({ PUBLIC_BASE_URL: BASE });
});
test.after.always(async () => {
  await p?.close();
});

interface Part {
  filename?: string;
  content: Buffer;
  content_type?: string;
  content_id?: string;
}

async function managedDomain(team: TestTeam): Promise<string> {
  return (await p.request('GET', '/domains', { key: team.key })).body.data.find((d: { managed: boolean }) => d.managed)
    .name;
}

/** A scheduled send from the managed domain to the simulator with these attachments; answers its id. */
async function sendWith(team: TestTeam, parts: Part[]): Promise<string> {
  const res = await p.request('POST', '/emails', {
    key: team.key,
    body: {
      from: `files@${await managedDomain(team)}`,
      to: `delivered@${p.config.SIMULATOR_DOMAIN}`,
      subject: 'files',
      text: 'see attached',
      scheduled_at: 'in 1 hour',
      attachments: parts.map((a) => ({ ...a, content: a.content.toString('base64') })),
    },
  });
  if (res.status !== 200) throw new Error(`send failed: ${res.status} ${res.text}`);
  return res.body.id;
}

/** The path and query of a download_url (the test server does not listen at PUBLIC_BASE_URL). */
const local = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

const PNG = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13]);
const PDF = Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\n%%EOF\n', 'latin1');

test('the list answers every attachment in part order with a signed link; get adds object', async (t) => {
  const team = await p.createTeam();
  const id = await sendWith(team, [
    { filename: 'notes.txt', content: Buffer.from('hello') },
    { filename: 'logo.png', content: PNG, content_id: 'logo' },
    { filename: 'report.pdf', content: PDF, content_type: 'application/pdf' },
  ]);
  const before = nowSeconds();
  const res = await p.request('GET', `/emails/${id}/attachments`, { key: team.key });
  t.is(res.status, 200, res.text);
  t.is(res.body.object, 'list');
  t.false(res.body.has_more);
  const rows = await p.db('email_attachments').where({ email_id: id }).orderBy('position');
  t.deepEqual(
    res.body.data.map((a: { id: string }) => a.id),
    rows.map((r) => r.id),
  );
  const [notes, logo, report] = res.body.data;
  t.deepEqual(Object.keys(notes).sort(), [
    'content_disposition',
    'content_type',
    'download_url',
    'expires_at',
    'filename',
    'id',
    'size',
  ]);
  t.like(notes, { filename: 'notes.txt', content_type: 'text/plain', content_disposition: 'attachment', size: 5 });
  t.like(logo, {
    filename: 'logo.png',
    content_type: 'image/png',
    content_disposition: 'inline',
    content_id: 'logo',
    size: PNG.length,
  });
  t.like(report, { filename: 'report.pdf', content_type: 'application/pdf', size: PDF.length });
  for (const a of res.body.data) {
    const url = new URL(a.download_url);
    t.is(url.origin + url.pathname, `${BASE}/emails/${id}/attachments/${a.id}/download`);
    t.deepEqual([...url.searchParams.keys()], ['expires', 'token']);
    const expires = Number(url.searchParams.get('expires'));
    t.true(expires >= before + DOWNLOAD_LINK_TTL_SECONDS && expires <= nowSeconds() + DOWNLOAD_LINK_TTL_SECONDS);
    t.is(a.expires_at, new Date(expires * 1000).toISOString());
  }

  const one = await p.request('GET', `/emails/${id}/attachments/${logo.id}`, { key: team.key });
  t.is(one.status, 200, one.text);
  const { download_url: _u, expires_at: _e, ...rest } = one.body;
  const { download_url: _u2, expires_at: _e2, ...listed } = logo;
  t.deepEqual(rest, { object: 'attachment', ...listed });
  t.regex(one.body.download_url, /\?expires=\d+&token=[A-Za-z0-9_-]{43}$/);

  // An email without attachments lists none; another email's attachment is not this one's.
  const plain = await sendWith(team, []);
  t.deepEqual((await p.request('GET', `/emails/${plain}/attachments`, { key: team.key })).body, {
    object: 'list',
    has_more: false,
    data: [],
  });
  isError(t, await p.request('GET', `/emails/${plain}/attachments/${logo.id}`, { key: team.key }), 404, 'not_found');
  isError(t, await p.request('GET', `/emails/${id}/attachments/${newId()}`, { key: team.key }), 404, 'not_found');
  isError(t, await p.request('GET', `/emails/${newId()}/attachments`, { key: team.key }), 404, 'not_found');
  isError(t, await p.request('GET', `/emails/${id}/attachments/not-a-uuid`, { key: team.key }), 404, 'not_found');
});

test('pages follow the part order; cursors are attachment ids of the same email', async (t) => {
  const team = await p.createTeam();
  const id = await sendWith(
    team,
    [0, 1, 2, 3, 4].map((i) => ({ filename: `part-${i}.txt`, content: Buffer.from(`part ${i}`) })),
  );
  const page = async (query: string) => {
    const res = await p.request('GET', `/emails/${id}/attachments?${query}`, { key: team.key });
    t.is(res.status, 200, res.text);
    return {
      names: res.body.data.map((a: { filename: string }) => a.filename),
      has_more: res.body.has_more,
      ids: res.body.data.map((a: { id: string }) => a.id),
    };
  };
  const first = await page('limit=2');
  t.deepEqual(first.names, ['part-0.txt', 'part-1.txt']);
  t.true(first.has_more);
  const second = await page(`limit=2&after=${first.ids[1]}`);
  t.deepEqual(second.names, ['part-2.txt', 'part-3.txt']);
  t.true(second.has_more);
  const third = await page(`limit=2&after=${second.ids[1]}`);
  t.deepEqual(third.names, ['part-4.txt']);
  t.false(third.has_more);
  const back = await page(`limit=2&before=${third.ids[0]}`);
  t.deepEqual(back.names, ['part-2.txt', 'part-3.txt']);
  t.true(back.has_more);
  const start = await page(`limit=2&before=${back.ids[0]}`);
  t.deepEqual(start.names, ['part-0.txt', 'part-1.txt']);
  t.false(start.has_more);
  // A cursor that is no attachment of this email is refused, not guessed at.
  const other = await sendWith(team, [{ filename: 'x.txt', content: Buffer.from('x') }]);
  const otherId = (await p.request('GET', `/emails/${other}/attachments`, { key: team.key })).body.data[0].id;
  isError(
    t,
    await p.request('GET', `/emails/${id}/attachments?after=${otherId}`, { key: team.key }),
    422,
    'validation_error',
  );
  isError(t, await p.request('GET', `/emails/${id}/attachments?limit=0`, { key: team.key }), 422, 'validation_error');
});

test('the download serves the exact bytes as an attachment, without a key, at / and /api/v1', async (t) => {
  const team = await p.createTeam();
  const id = await sendWith(team, [
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
  const id = await sendWith(team, [
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
  const id = await sendWith(team, [
    { filename: 'a.txt', content: Buffer.from('a') },
    { filename: 'b.txt', content: Buffer.from('b') },
  ]);
  const [a, b] = (await p.request('GET', `/emails/${id}/attachments`, { key: team.key })).body.data;
  const foreignEmail = await sendWith(otherTeam, [{ filename: 'f.txt', content: Buffer.from('f') }]);
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
  const id = await sendWith(team, [{ filename: 'a.txt', content: Buffer.from('hi') }]);
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

test('signLink and verifyLink: one object, one kind, one team, until expiry', (t) => {
  const key = linkKey(p.config);
  const now = new Date('2026-11-22T10:00:00.000Z');
  const claims = {
    kind: 'email_attachment',
    teamId: newId(),
    objectId: newId(),
    expires: nowSeconds(now) + DOWNLOAD_LINK_TTL_SECONDS,
  };
  const token = signLink(key, claims);
  t.regex(token, /^[A-Za-z0-9_-]{43}$/);
  t.is(signLink(key, claims), token);
  t.true(verifyLink(key, claims, token, now));
  t.true(verifyLink(key, claims, token, new Date((claims.expires - 1) * 1000)));
  t.false(verifyLink(key, claims, token, new Date(claims.expires * 1000)), 'expired at its instant');
  t.false(verifyLink(key, { ...claims, objectId: newId() }, token, now));
  t.false(verifyLink(key, { ...claims, teamId: newId() }, token, now));
  t.false(verifyLink(key, { ...claims, kind: 'received_attachment' }, token, now));
  t.false(verifyLink(key, { ...claims, expires: claims.expires + 1 }, token, now));
  t.false(verifyLink(Buffer.alloc(32, 1), claims, token, now), 'another key');
  for (const bad of [undefined, '', token.slice(1), `${token}A`, token.toUpperCase(), 42])
    t.false(verifyLink(key, claims, bad, now));
  const long = { ...claims, expires: nowSeconds(now) + 3600 };
  t.false(verifyLink(key, long, signLink(key, long), now), 'longer than the kind allows');
  t.true(verifyLink(key, long, signLink(key, long), now, 3600));
  t.throws(() => signLink(key, { ...claims, objectId: 'a\nb' }));
});

test('served types and Content-Disposition encoding', (t) => {
  for (const type of [
    'application/pdf',
    'image/png',
    'image/jpeg',
    'image/gif',
    'image/webp',
    'text/plain',
    'text/csv',
    'application/zip',
  ]) {
    t.is(servedContentType(type), type);
    t.is(servedContentType(`${type.toUpperCase()}; charset=utf-8`), type);
  }
  for (const type of [
    'text/html',
    'image/svg+xml',
    'application/xhtml+xml',
    'text/xml',
    'application/javascript',
    'text/javascript',
    'application/x-shockwave-flash',
    '',
    'nonsense',
  ]) {
    t.is(servedContentType(type), 'application/octet-stream', type);
  }
  t.is(contentDisposition('plain.txt'), 'attachment; filename="plain.txt"; filename*=UTF-8\'\'plain.txt');
  t.is(
    contentDisposition('naïve café.pdf'),
    'attachment; filename="naive cafe.pdf"; filename*=UTF-8\'\'na%C3%AFve%20caf%C3%A9.pdf',
  );
  t.is(
    contentDisposition("it's (1)*.txt"),
    "attachment; filename=\"it's (1)*.txt\"; filename*=UTF-8''it%27s%20%281%29%2A.txt",
  );
  t.is(
    contentDisposition('evil"\r\nX-Header: 1.txt'),
    'attachment; filename="evil_X-Header: 1.txt"; filename*=UTF-8\'\'evil%22X-Header%3A%201.txt',
  );
  t.is(
    contentDisposition('../../etc/passwd'),
    'attachment; filename=".._.._etc_passwd"; filename*=UTF-8\'\'.._.._etc_passwd',
  );
  t.is(contentDisposition('日本.txt'), 'attachment; filename="__.txt"; filename*=UTF-8\'\'%E6%97%A5%E6%9C%AC.txt');
  t.is(contentDisposition(null), 'attachment; filename="attachment"; filename*=UTF-8\'\'attachment');
});
