import { createHash } from 'node:crypto';
import test from 'ava';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { startDnsServer, type DnsServer } from './helpers/dns-server.ts';
import type { ApiRecord } from './helpers/domain-records.ts';
import { checkDomain } from '../shared/domains/verify.ts';
import { checkTinyPs, MAX_SVG_BYTES } from '../shared/domains/svg.ts';

const BASE = 'https://mail.example-platform.test';

let p: Platform;
let dns: DnsServer;
test.before(async () => {
  dns = await startDnsServer();
  p = await startPlatform({ DNS_SERVERS: dns.address, PUBLIC_BASE_URL: BASE });
});
test.after.always(async () => {
  await p?.close();
  await dns?.close();
});

const svg = (body = '<rect width="64" height="64" fill="#0a5"/>', attrs = 'viewBox="0 0 64 64"') =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" version="1.2" baseProfile="tiny-ps" ${attrs}>\n<title>Acme</title>\n${body}\n</svg>\n`;

const VALID =
  svg(`<defs><linearGradient id="g"><stop offset="0" stop-color="#fff"/><stop offset="1" stop-color="#0a5"/></linearGradient></defs>
<rect width="64" height="64" fill="url(#g)"/>
<path id="p" d="M8 8 L56 56 Z" style="stroke:#000;stroke-width:2"/>
<use xlink:href="#p" transform="rotate(90 32 32)"/>`);

async function domainOf(team: TestTeam, name = `brand-${Math.random().toString(36).slice(2, 10)}.test`) {
  const res = await p.request('POST', '/domains', { key: team.key, body: { name } });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.body as { id: string; name: string; records: ApiRecord[] };
}

const upload = (team: TestTeam, id: string, body: string) =>
  p.request('PUT', `/domains/${id}/brand/logo`, { key: team.key, body: { svg: body } });
const publicFile = (url: string, headers: Record<string, string> = {}) =>
  fetch(p.url + new URL(url).pathname, { headers: { 'user-agent': 'bimi-fetcher/1.0', ...headers } });
const bimiOf = async (team: TestTeam, id: string) =>
  ((await p.request('GET', `/domains/${id}`, { key: team.key })).body.records as ApiRecord[]).filter(
    (r) => r.record === 'BIMI',
  );

test('a valid logo: stored, served byte for byte at its content address, and published as the BIMI record', async (t) => {
  const team = await p.createTeam();
  const domain = await domainOf(team);
  const res = await upload(team, domain.id, VALID);
  t.is(res.status, 200, res.text);
  const sha256 = createHash('sha256').update(VALID, 'utf8').digest('hex');
  t.deepEqual(Object.keys(res.body).sort(), ['bytes', 'domain_id', 'object', 'sha256', 'uploaded_at', 'url']);
  t.is(res.body.object, 'domain_brand_logo');
  t.is(res.body.domain_id, domain.id);
  t.is(res.body.sha256, sha256);
  t.is(res.body.bytes, Buffer.byteLength(VALID));
  t.is(res.body.url, `${BASE}/brand/${domain.id}/${sha256}.svg`);

  const got = await p.request('GET', `/domains/${domain.id}/brand/logo`, { key: team.key });
  t.is(got.status, 200);
  t.deepEqual(got.body, res.body);

  // The public file: no key, the exact bytes, inert and cacheable for good.
  const file = await publicFile(res.body.url);
  t.is(file.status, 200);
  const bytes = Buffer.from(await file.arrayBuffer());
  t.true(bytes.equals(Buffer.from(VALID, 'utf8')));
  t.is(createHash('sha256').update(bytes).digest('hex'), sha256);
  t.is(file.headers.get('content-type'), 'image/svg+xml');
  t.is(file.headers.get('content-security-policy'), "default-src 'none'; style-src 'unsafe-inline'");
  t.is(file.headers.get('x-content-type-options'), 'nosniff');
  t.regex(file.headers.get('cache-control') ?? '', /public, max-age=31536000, immutable/);
  const etag = file.headers.get('etag');
  t.truthy(etag);
  // fetch adds `Cache-Control: no-cache` to a conditional request (Fetch, HTTP-network-or-cache fetch) unless
  // one is given, and no-cache must be answered in full: a cache revalidating sends max-age=0.
  t.is((await publicFile(res.body.url, { 'if-none-match': etag!, 'cache-control': 'max-age=0' })).status, 304);
  t.is((await publicFile(`${BASE}/api/v1/brand/${domain.id}/${sha256}.svg`)).status, 200);

  // The record to publish, and the event that says the records changed.
  const bimi = await bimiOf(team, domain.id);
  t.deepEqual(
    bimi.map((r) => [r.name, r.type, r.value, r.status]),
    [['default._bimi', 'TXT', `v=BIMI1; l=${res.body.url};`, 'not_started']],
  );
  const events = await p.db('events').where({ team_id: team.id, type: 'domain.updated' });
  t.true(events.some((e) => e.data.records.some((r: ApiRecord) => r.record === 'BIMI')));

  // The same file again changes nothing: same address, one record.
  const again = await upload(team, domain.id, VALID);
  t.is(again.body.url, res.body.url);
  t.is((await bimiOf(team, domain.id)).length, 1);
});

test("the BIMI record is verified like the others, and never takes a domain's verification away", async (t) => {
  const team = await p.createTeam();
  const domain = await domainOf(team);
  const logo = (await upload(team, domain.id, VALID)).body;
  const records = (await p.request('GET', `/domains/${domain.id}`, { key: team.key })).body.records as ApiRecord[];
  for (const r of records.filter((x) => x.record !== 'BIMI')) {
    const name = `${r.name}.${domain.name}`;
    if (r.type === 'MX') dns.set(name, 'MX', [{ exchange: r.value, priority: r.priority! }]);
    else dns.set(name, 'TXT', [r.value]);
  }
  // Everything but BIMI published: the domain is verified, the BIMI record pending.
  let checked = await checkDomain(p.db, p.deps.dns, p.config, domain.id);
  t.is(checked?.status, 'verified');
  t.is((await bimiOf(team, domain.id))[0].status, 'pending');
  // A BIMI record for another logo is wrong; ours (with an a= of the customer's own) is verified.
  dns.set(`default._bimi.${domain.name}`, 'TXT', [`v=BIMI1; l=${BASE}/brand/other.svg;`]);
  checked = await checkDomain(p.db, p.deps.dns, p.config, domain.id);
  t.is((await bimiOf(team, domain.id))[0].status, 'pending');
  dns.set(`default._bimi.${domain.name}`, 'TXT', [`v=BIMI1; l=${logo.url}; a=;`]);
  checked = await checkDomain(p.db, p.deps.dns, p.config, domain.id);
  t.is(checked?.status, 'verified');
  t.is((await bimiOf(team, domain.id))[0].status, 'verified');
});

test('a new logo gets a new address: the old file stops answering and the record follows', async (t) => {
  const team = await p.createTeam();
  const domain = await domainOf(team);
  const first = (await upload(team, domain.id, VALID)).body;
  const second = (await upload(team, domain.id, svg('<circle cx="32" cy="32" r="30" fill="#c00"/>'))).body;
  t.not(second.sha256, first.sha256);
  t.is((await publicFile(first.url)).status, 404);
  t.is((await publicFile(second.url)).status, 200);
  t.deepEqual(
    (await bimiOf(team, domain.id)).map((r) => r.value),
    [`v=BIMI1; l=${second.url};`],
  );
  // Exactly one file is left in the store.
  t.is(await p.deps.blobs.size(`brand/${team.id}/${domain.id}/${first.sha256}.svg`), null);
  t.truthy(await p.deps.blobs.size(`brand/${team.id}/${domain.id}/${second.sha256}.svg`));
});

test('the BIMI record survives a settings change and a DKIM rotation', async (t) => {
  const team = await p.createTeam();
  const domain = await domainOf(team);
  const logo = (await upload(team, domain.id, VALID)).body;
  t.is(
    (await p.request('PATCH', `/domains/${domain.id}`, { key: team.key, body: { open_tracking: true } })).status,
    200,
  );
  t.is((await p.request('POST', `/domains/${domain.id}/dkim/rotate`, { key: team.key })).status, 200);
  const records = (await p.request('GET', `/domains/${domain.id}`, { key: team.key })).body.records as ApiRecord[];
  t.deepEqual(
    records.filter((r) => r.record === 'BIMI').map((r) => r.value),
    [`v=BIMI1; l=${logo.url};`],
  );
  t.true(records.some((r) => r.record === 'Tracking'));
  t.is(records.filter((r) => r.record === 'DKIM').length, 2);
});

const hostile: [string, string, string, RegExp][] = [
  ['a <script>', svg('<script>alert(1)</script>'), 'script', /<script> element: scripts are not allowed/],
  [
    'a namespaced script',
    svg('<h:script xmlns:h="http://www.w3.org/1999/xhtml">alert(1)</h:script>'),
    'script',
    /<h:script>/,
  ],
  [
    'an onload attribute',
    svg('<rect width="64" height="64" onload="alert(1)"/>'),
    'event_attribute',
    /event attribute onload/,
  ],
  ['an onclick on the root', svg('', 'viewBox="0 0 64 64" onclick="x()"'), 'event_attribute', /onclick/],
  [
    'an external href',
    svg('<use xlink:href="https://evil.example/logo.svg#a"/>'),
    'external_reference',
    /xlink:href attribute of <use> points to/,
  ],
  ['a relative href', svg('<use href="other.svg#a"/>'), 'external_reference', /only references inside the document/],
  [
    'an href hidden in character references',
    svg('<use xlink:href="&#104;ttp://evil.example/x"/>'),
    'external_reference',
    /http:\/\/evil/,
  ],
  [
    'an external url() paint',
    svg('<rect width="64" height="64" fill="url(https://evil.example/p.svg#g)"/>'),
    'external_reference',
    /https: URL/,
  ],
  ['a data: URI', svg('<use xlink:href="data:image/svg+xml;base64,PHN2Zy8+"/>'), 'data_uri', /data: URI/],
  ['an <image>', svg('<image width="64" height="64" xlink:href="#x"/>'), 'image', /<image> element/],
  [
    'a <foreignObject>',
    svg('<foreignObject width="64" height="64"><div xmlns="http://www.w3.org/1999/xhtml">hi</div></foreignObject>'),
    'foreign_object',
    /<foreignObject>/,
  ],
  [
    'an animation',
    svg('<rect width="64" height="64"><animate attributeName="x" from="0" to="10" dur="1s"/></rect>'),
    'animation',
    /animation is not allowed/,
  ],
  ['a style @import', svg('<style>@import "https://evil.example/a.css";</style>'), 'style_import', /@import/],
  [
    'a style url()',
    svg('<style><![CDATA[rect { fill: url(//evil.example/x.svg#g) }]]></style>'),
    'external_reference',
    /url\(\/\/evil/,
  ],
  ['a CSS escape', svg('<rect width="64" height="64" style="fill:\\75rl(x)"/>'), 'external_reference', /CSS escape/],
  [
    'a stylesheet processing instruction',
    svg().replace('\n<svg', '\n<?xml-stylesheet href="https://evil.example/a.css"?>\n<svg'),
    'processing_instruction',
    /xml-stylesheet/,
  ],
  [
    'a DOCTYPE with an entity (XXE)',
    `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>${svg('<text>&x;</text>').replace(/^<\?xml[^>]*>\n/, '')}`,
    'doctype',
    /DOCTYPE/,
  ],
  ['an undefined entity', svg('<text>&x;</text>'), 'not_xml', /undefined entity/],
  ['a wide viewBox', svg('', 'viewBox="0 0 64 32"'), 'not_square', /64 wide and 32 high/],
  [
    'unequal width and height',
    svg('', 'viewBox="0 0 64 64" width="64" height="32"'),
    'not_square',
    /width="64" and height="32" differ/,
  ],
  ['no viewBox', svg('', 'width="64" height="64"'), 'view_box', /viewBox/],
  ['x= on the root', svg('', 'viewBox="0 0 64 64" x="5"'), 'root_position', /x= or y=/],
  [
    'the SVG 1.1 profile',
    svg().replace('version="1.2" baseProfile="tiny-ps"', 'version="1.1" baseProfile="full"'),
    'version',
    /version="1.2".*not "1.1"/,
  ],
  [
    'the plain Tiny profile',
    svg().replace('baseProfile="tiny-ps"', 'baseProfile="tiny"'),
    'base_profile',
    /baseProfile="tiny-ps".*not "tiny"/,
  ],
  ['no title', svg().replace('<title>Acme</title>', ''), 'title', /<title>/],
  ['no SVG namespace', svg().replace('xmlns="http://www.w3.org/2000/svg" ', ''), 'namespace', /xmlns/],
  [
    'another root element',
    '<html xmlns="http://www.w3.org/1999/xhtml"><body/></html>',
    'root',
    /root element is <html>/,
  ],
  ['more than 32 KB', svg(`<desc>${'x'.repeat(MAX_SVG_BYTES)}</desc>`), 'too_large', /at most 32768 bytes/],
  ['not XML at all', 'GIF89a this is not a vector logo', 'not_xml', /not well-formed XML/],
  ['unclosed XML', svg().replace('</svg>', ''), 'not_xml', /not well-formed XML/],
];

for (const [what, file, rule, message] of hostile) {
  test(`refused: ${what}`, async (t) => {
    const team = await p.createTeam();
    const domain = await domainOf(team);
    const res = await upload(team, domain.id, file);
    t.is(res.status, 422, res.text);
    t.is(res.body.name, 'validation_error');
    t.is(res.body.details?.rule, rule);
    t.regex(res.body.message, message);
    t.is(res.body.errors?.[0]?.path, 'svg');
    // Nothing was kept.
    t.is((await p.request('GET', `/domains/${domain.id}/brand/logo`, { key: team.key })).status, 404);
    t.deepEqual(await bimiOf(team, domain.id), []);
  });
}

test('the validator accepts common exporter output and refuses a parser-hostile element name', (t) => {
  t.true(checkTinyPs(VALID).ok);
  // Comments, CDATA styles with in-document url(#id), px sizes, a <desc>, character references in text.
  t.true(
    checkTinyPs(
      svg(
        '<!-- exported --><desc>A &amp; B &#169;</desc><style><![CDATA[.a{fill:url(#g)}]]></style><rect class="a" width="64" height="64"/>',
        'viewBox="0,0,64,64" width="64px" height="64px"',
      ),
    ).ok,
  );
  const polluting = checkTinyPs(svg('<__proto__/>'));
  t.false(polluting.ok);
});

test("a body past the operation's limit is 413 before anything is read into memory", async (t) => {
  const team = await p.createTeam();
  const domain = await domainOf(team);
  const res = await upload(team, domain.id, 'x'.repeat(200_000));
  t.is(res.status, 413);
});

test('delete removes the file, the metadata and the BIMI record', async (t) => {
  const team = await p.createTeam();
  const domain = await domainOf(team);
  const logo = (await upload(team, domain.id, VALID)).body;
  const res = await p.request('DELETE', `/domains/${domain.id}/brand/logo`, { key: team.key });
  t.is(res.status, 200);
  t.deepEqual(res.body, { object: 'domain_brand_logo', domain_id: domain.id, deleted: true });
  t.is((await publicFile(logo.url)).status, 404);
  t.is((await p.request('GET', `/domains/${domain.id}/brand/logo`, { key: team.key })).status, 404);
  t.deepEqual(await bimiOf(team, domain.id), []);
  t.is(await p.deps.blobs.size(`brand/${team.id}/${domain.id}/${logo.sha256}.svg`), null);
  const again = await p.request('DELETE', `/domains/${domain.id}/brand/logo`, { key: team.key });
  t.is(again.status, 404);
  t.is(again.body.name, 'not_found');
});

test("another team's domain is not found, and its logo is untouched", async (t) => {
  const owner = await p.createTeam();
  const other = await p.createTeam();
  const domain = await domainOf(owner);
  const logo = (await upload(owner, domain.id, VALID)).body;
  for (const [method, body] of [['GET'], ['PUT', { svg: VALID }], ['DELETE']] as const) {
    const res = await p.request(method, `/domains/${domain.id}/brand/logo`, { key: other.key, body });
    t.is(res.status, 404, `${method}: ${res.text}`);
    t.is(res.body.name, 'not_found');
  }
  t.is((await publicFile(logo.url)).status, 200);
  t.deepEqual((await p.request('GET', `/domains/${domain.id}/brand/logo`, { key: owner.key })).body, logo);
});

test("the public path answers 404 for anything but a domain's current logo", async (t) => {
  const team = await p.createTeam();
  const domain = await domainOf(team);
  const logo = (await upload(team, domain.id, VALID)).body;
  const other = await domainOf(team);
  for (const path of [
    `/brand/${other.id}/${logo.sha256}.svg`,
    `/brand/${domain.id}/${'0'.repeat(64)}.svg`,
    `/brand/${domain.id}/${logo.sha256.toUpperCase()}.svg`,
    `/brand/${domain.id}/../${logo.sha256}.svg`,
    `/brand/not-a-uuid/${logo.sha256}.svg`,
  ]) {
    const res = await p.request('GET', path);
    t.is(res.status, 404, path);
    t.is(res.body?.name, 'not_found', path);
  }
});

test('the managed domain takes no logo (422); certificate routes answer 501 for now', async (t) => {
  const team = await p.createTeam();
  const managed = (await p.request('GET', '/domains', { key: team.key })).body.data.find(
    (d: { managed: boolean }) => d.managed,
  );
  const put = await upload(team, managed.id, VALID);
  t.is(put.status, 422);
  t.is(put.body.name, 'validation_error');
  t.is((await p.request('DELETE', `/domains/${managed.id}/brand/logo`, { key: team.key })).status, 422);

  const domain = await domainOf(team);
  for (const method of ['GET', 'PUT', 'DELETE']) {
    const res = await p.request(method, `/domains/${domain.id}/brand/certificate`, {
      key: team.key,
      body: method === 'PUT' ? {} : undefined,
    });
    t.is(res.status, 501, method);
    t.is(res.body.name, 'not_implemented');
  }
});
