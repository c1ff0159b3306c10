// An email's HTML as a page of its own (the dashboard's sandboxed frame opens it): a received email's, as the real MX
// accepted it over SMTP and the receive job stored it, and a sent email's, as POST /emails took it. Its `cid:` images
// are inlined as data: URIs from its own parts (the api's JSON keeps `cid:`), under the email's policy; another
// team's email, one without HTML and a bad query are refused in the Error shape. The inlining's rules on a real blob
// store: image types only, each image once, a budget in all, references in another case or percent-encoded.
import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isError } from './helpers/http.ts';
import { managedDomain } from './helpers/platform.ts';
import { startReceivingWorld, type ReceivingWorld } from './helpers/receiving-world.ts';
import { PNG } from './helpers/attachments.ts';
import { createFsBlobStore } from '../shared/blobs.ts';
import { inlineCidImages, MAX_INLINED_BYTES } from '../shared/cid-images.ts';
import type { AttachmentRow } from '../shared/attachment-rows.ts';

let w: ReceivingWorld;
test.before(async () => {
  w = await startReceivingWorld();
});
test.after.always(() => w?.close());

const dataUri = (bytes: Buffer, type = 'image/png') => `data:${type};base64,${bytes.toString('base64')}`;

test("a received email's page: its styles kept, its cid: image inlined, remote images only when asked", async (t) => {
  const { team, domain } = await w.receivingTeam();
  const html = '<p style="color:red">Hi</p><img src="cid:logo@x"><img src="https://tracker.test/p.gif">';
  const id = await w.deliverOne(`orders@${domain}`, {
    subject: 'With a logo',
    html,
    attachments: [{ filename: 'logo.png', content: PNG, contentType: 'image/png', cid: 'logo@x' }],
  });
  const page = await w.p.request('GET', `/emails/receiving/${id}/html`, { key: team.key });
  t.is(page.status, 200, page.text);
  t.regex(page.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/);
  const csp = page.headers.get('content-security-policy') ?? '';
  t.regex(csp, /default-src 'none'/);
  t.regex(csp, /img-src 'self' data:;/);
  t.notRegex(csp, /script-src/);
  t.is(page.headers.get('cache-control'), 'private, no-store');
  t.is(page.text, html.replace('cid:logo@x', dataUri(PNG)), 'the image inlined, nothing else changed');
  const remote = await w.p.request('GET', `/emails/receiving/${id}/html?images=remote`, { key: team.key });
  t.regex(remote.headers.get('content-security-policy') ?? '', /img-src 'self' https: data:;/);
  // The api's answer is the email as received.
  const json = await w.p.request('GET', `/emails/receiving/${id}`, { key: team.key });
  t.is(json.body.html, html);
});

test("a received email's page: another team's, one without HTML, a malformed id, a bad query or no key are refused", async (t) => {
  const { team, domain } = await w.receivingTeam();
  const other = await w.receivingTeam();
  const id = await w.deliverOne(`orders@${domain}`, { subject: 'Words', html: '<p>words</p>' });
  const plain = await w.deliverOne(`orders@${domain}`, { subject: 'Plain', text: 'only text' });
  const foreign = await w.p.request('GET', `/emails/receiving/${id}/html`, { key: other.team.key });
  isError(t, foreign, 404, 'not_found');
  const none = await w.p.request('GET', `/emails/receiving/${plain}/html`, { key: team.key });
  isError(t, none, 404, 'not_found');
  const badId = await w.p.request('GET', '/emails/receiving/not-an-id/html', { key: team.key });
  // A malformed id is refused as on every keyed route (Resend: invalid_parameter), naming the parameter.
  isError(t, badId, 422, 'invalid_parameter');
  t.is(badId.body.message, 'The `email_id` in the path must be a valid UUID.');
  const badQuery = await w.p.request('GET', `/emails/receiving/${id}/html?images=all`, { key: team.key });
  isError(t, badQuery, 422, 'validation_error');
  isError(t, await w.p.request('GET', `/emails/receiving/${id}/html`), 401, 'missing_api_key');
});

test("a sent email's page inlines its own cid: image too", async (t) => {
  const team = await w.p.createTeam();
  const managed = (await managedDomain(w.p, team)).name;
  const html = '<p>Our logo</p><img src="cid:brand" alt="">';
  const sent = await w.p.request('POST', '/emails', {
    key: team.key,
    body: {
      from: `news@${managed}`,
      to: `delivered@${w.p.config.SIMULATOR_DOMAIN}`,
      subject: 'With the brand',
      html,
      scheduled_at: 'in 1 hour',
      attachments: [{ filename: 'brand.png', content: PNG.toString('base64'), content_id: 'brand' }],
    },
  });
  t.is(sent.status, 200, sent.text);
  const page = await w.p.request('GET', `/emails/${sent.body.id}/html`, { key: team.key });
  t.is(page.status, 200, page.text);
  t.is(page.text, html.replace('cid:brand', dataUri(PNG)));
  const json = await w.p.request('GET', `/emails/${sent.body.id}`, { key: team.key });
  t.is(json.body.html, html, "the api's answer keeps cid:");
});

test('the inlining: images only, each once, within the budget; a reference in another case, percent-encoded or to a bracketed id', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'pw-cid-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const blobs = createFsBlobStore(dir);
  let n = 0;
  const part = async (
    content_id: string,
    content_type: string,
    bytes: Buffer,
    stored = true,
  ): Promise<AttachmentRow> => {
    const key = `parts/p${++n}`;
    if (stored) await blobs.put(key, bytes);
    const id = `00000000-0000-4000-8000-00000000000${n}`;
    const at = { id, email_id: id, team_id: id, position: n, filename: null, content_disposition: 'inline' as const };
    return { ...at, content_type, content_id, size: bytes.length, blob_key: key };
  };
  const gif = Buffer.from('GIF89a');
  const parts = [
    await part('Logo@X', 'IMAGE/PNG; name="logo.png"', PNG),
    await part('script', 'text/html', Buffer.from('<script>alert(1)</script>')),
    await part('gone', 'image/gif', gif, false),
    await part('a b', 'image/gif', gif),
    await part('<bracketed>', 'image/gif', gif),
  ];
  const html =
    '<img src="cid:Logo@X"><img src=cid:logo@x><div style="background:url(cid:a%20b)"></div><img src="cid:bracketed">';
  const more = '<iframe src="cid:script"></iframe><img src="cid:gone"><img src="cid:nobody">';
  const out = await inlineCidImages(html + more, parts, blobs);
  const png = dataUri(PNG);
  t.is(
    out,
    `<img src="${png}"><img src=${png}><div style="background:url(${dataUri(gif, 'image/gif')})"></div>` +
      `<img src="${dataUri(gif, 'image/gif')}">${more}`,
    'the type named is the image type alone; a non-image, a missing blob and an unknown id keep their cid:',
  );
  // Past the budget an image keeps its cid:.
  const big = await part('big', 'image/png', Buffer.alloc(MAX_INLINED_BYTES + 1));
  t.is(await inlineCidImages('<img src="cid:big">', [big], blobs), '<img src="cid:big">');
  t.is(await inlineCidImages('<p>no images</p>', [], blobs), '<p>no images</p>');
});
