// A sent email's attachments: list and get with signed links, the links themselves, and the types and names a
// download is served with. The public download behind the links: test/email-attachment-downloads.test.ts.
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { BASE, PDF, PNG, sendWith } from './helpers/attachments.ts';
import { isError } from './helpers/http.ts';
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

let p: Platform;
test.before(async () => {
  p = await startPlatform({ PUBLIC_BASE_URL: BASE });
});
test.after.always(async () => {
  await p?.close();
});

test('the list answers every attachment in part order with a signed link; get adds object', async (t) => {
  const team = await p.createTeam();
  const id = await sendWith(p, team, [
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
  const plain = await sendWith(p, team, []);
  t.deepEqual((await p.request('GET', `/emails/${plain}/attachments`, { key: team.key })).body, {
    object: 'list',
    has_more: false,
    data: [],
  });
  isError(t, await p.request('GET', `/emails/${plain}/attachments/${logo.id}`, { key: team.key }), 404, 'not_found');
  isError(t, await p.request('GET', `/emails/${id}/attachments/${newId()}`, { key: team.key }), 404, 'not_found');
  isError(t, await p.request('GET', `/emails/${newId()}/attachments`, { key: team.key }), 404, 'not_found');
  isError(
    t,
    await p.request('GET', `/emails/${id}/attachments/not-a-uuid`, { key: team.key }),
    422,
    'invalid_parameter',
  );
});

test('pages follow the part order; cursors are attachment ids of the same email', async (t) => {
  const team = await p.createTeam();
  const id = await sendWith(
    p,
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
  const other = await sendWith(p, team, [{ filename: 'x.txt', content: Buffer.from('x') }]);
  const otherId = (await p.request('GET', `/emails/${other}/attachments`, { key: team.key })).body.data[0].id;
  isError(
    t,
    await p.request('GET', `/emails/${id}/attachments?after=${otherId}`, { key: team.key }),
    422,
    'validation_error',
  );
  isError(t, await p.request('GET', `/emails/${id}/attachments?limit=0`, { key: team.key }), 422, 'validation_error');
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
