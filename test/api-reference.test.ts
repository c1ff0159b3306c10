// The API reference page (/docs): served by the api with everything it loads, and rendered by a real headless
// Chromium (Debian's, never a downloaded browser) that must reach nothing beyond the loopback api.
import test from 'ava';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { nodeRequest } from './helpers/http.ts';
import { launchChromium, openPage, type Visit } from './helpers/browser.ts';

let p: Platform;
let browser: Browser;

test.before(async () => {
  p = await startPlatform();
  browser = await launchChromium();
});

test.after.always(async () => {
  await browser?.close();
  await p?.close();
});

/** Opens `url` in a fresh context (noting its requests and console errors) once the operation list is rendered. */
async function visit(url: string, viewport: { width: number; height: number }, mobile = false): Promise<Visit> {
  const v = await openPage(browser, viewport, url, mobile);
  // The operation list is rendered once the document has been fetched and parsed: ~3 s of Swagger UI's OpenAPI 3.1
  // parser after the page's load on a quiet machine, and more than the 30 s this wait once had on CI's loaded two
  // cores. The browser helper's wait (PAGE_TIMEOUT_MS), as every page test's.
  await v.page.locator('.opblock-summary').first().waitFor();
  return v;
}

function leftLoopback(requests: string[]): string[] {
  return requests.filter((u) => {
    const { protocol, hostname } = new URL(u);
    return protocol !== 'data:' && !(hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]');
  });
}

test('GET /docs renders the operations in headless Chromium, loading nothing from outside', async (t) => {
  const shots = await mkdtemp(path.join(tmpdir(), 'postwerk-api-reference-'));
  const desktop = await visit(`${p.url}/docs`, { width: 1280, height: 900 });
  const { page } = desktop;
  const paths = await page.locator('.opblock-summary-path').allTextContents();
  t.true(paths.some((x) => x.replace(/\u200b/g, '') === '/emails'));
  // Swagger UI renders the tags near the viewport only: find each operation through the page's tag filter.
  const filter = page.getByPlaceholder('Filter by tag or path');
  const listed: [string, string][] = [
    ['emails', 'Send an email'],
    ['emails', 'Send a batch of emails'],
    ['api-keys', 'Create an API key'],
    ['domains', 'Add a domain'],
  ];
  for (const [tag, title] of listed) {
    await filter.fill(tag);
    const summary = page.locator('.opblock-summary-description', { hasText: title }).first();
    await summary.waitFor();
    t.true(await summary.isVisible(), `${title} is listed under ${tag}`);
  }
  await filter.fill('');
  await page.locator('#operations-emails-sendEmail').waitFor();
  t.true(await page.getByText('Postwerk email platform API').first().isVisible());
  // The document the page read is the api's own.
  t.true(desktop.requests.includes(`${p.url}/openapi.json`), desktop.requests.join('\n'));
  // Opening the send operation shows its description, parameters and request example.
  const send = page.locator('#operations-emails-sendEmail');
  await send.locator('.opblock-summary').click();
  await send.locator('.opblock-body').waitFor();
  const opened = (await send.textContent()) ?? '';
  t.regex(opened, /up to 50 recipients/);
  t.regex(opened, /Idempotency-Key/);
  t.regex(opened, /delivered@simulator\.postwerk\.localhost/);
  // The shared error answers (components.responses) are shown resolved, with their descriptions.
  await send.getByText('rate_limit_exceeded or a quota').waitFor();
  await send.scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shots, 'desktop.png') });

  const phone = await visit(`${p.url}/docs`, { width: 390, height: 844 }, true);
  await phone.page.screenshot({ path: path.join(shots, 'phone.png') });
  // Nothing wider than the screen, the send operation opened too: the page scrolls down, never sideways.
  const overflow = () => phone.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  t.true((await overflow()) <= 0, `the phone page is ${await overflow()}px wider than the screen`);
  const phoneSend = phone.page.locator('#operations-emails-sendEmail');
  await phoneSend.locator('.opblock-summary').click();
  await phoneSend.locator('.opblock-body').waitFor();
  t.true((await overflow()) <= 0, `the opened send operation is ${await overflow()}px wider than the screen`);
  t.log(`screenshots: ${path.join(shots, 'desktop.png')} and ${path.join(shots, 'phone.png')}`);

  for (const { requests, errors } of [desktop, phone]) {
    t.deepEqual(leftLoopback(requests), []);
    t.deepEqual(errors, []);
  }
});

test('GET /api/v1/docs reads /api/v1/openapi.json', async (t) => {
  const v1 = await visit(`${p.url}/api/v1/docs`, { width: 1280, height: 900 });
  t.true(v1.requests.includes(`${p.url}/api/v1/openapi.json`), v1.requests.join('\n'));
  t.true(v1.requests.includes(`${p.url}/api/v1/docs/assets/swagger-ui-bundle.js`));
  t.deepEqual(leftLoopback(v1.requests), []);
  t.deepEqual(v1.errors, []);
});

test('the page and its files: a CSP that allows only this origin, gzip, ETag revalidation, nothing else served', async (t) => {
  const page = await p.request('GET', '/docs');
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type') ?? '', /^text\/html/);
  const csp = page.headers.get('content-security-policy') ?? '';
  t.regex(csp, /default-src 'none'/);
  t.regex(csp, /script-src 'self'(;|$)/);
  t.notRegex(page.text, /https?:\/\//, 'the page names no absolute URL');

  // node:http, not fetch: fetch adds `cache-control: no-cache` to a conditional request, which forbids a 304.
  const get = (headers: Record<string, string>) =>
    nodeRequest(p.url, {
      method: 'GET',
      path: '/docs/assets/swagger-ui-bundle.js',
      headers: { 'user-agent': 'test', ...headers },
    });
  const gzipped = await get({ 'accept-encoding': 'gzip' });
  t.is(gzipped.status, 200);
  t.is(gzipped.headers['content-encoding'], 'gzip');
  t.regex(gzipped.headers['content-type'] ?? '', /^text\/javascript/);
  const plain = await get({});
  t.is(plain.status, 200);
  t.is(plain.headers['content-encoding'], undefined);
  t.regex(plain.text, /SwaggerUIBundle/);
  t.not(plain.headers.etag, gzipped.headers.etag);
  const again = await get({ 'accept-encoding': 'gzip', 'if-none-match': String(gzipped.headers.etag) });
  t.is(again.status, 304);
  t.is(again.text, '');
  t.is((await get({ 'if-none-match': String(gzipped.headers.etag) })).status, 200, 'the other encoding is sent');

  const slash = await nodeRequest(p.url, { method: 'GET', path: '/docs/', headers: { 'user-agent': 'test' } });
  t.is(slash.status, 302);
  t.is(slash.headers.location, '../docs');
  for (const other of [
    '/docs/assets/index.html',
    '/docs/assets/..%2Fpage.ts',
    '/docs/assets/',
    '/docs/swagger-ui.css',
  ]) {
    const res = await p.request('GET', other);
    t.is(res.status, 404, other);
    t.is(res.body?.name, 'not_found', other);
  }
  const post = await p.request('POST', '/docs', { body: {} });
  t.is(post.status, 404);
});

test("the tests' Chromium runs without the address bar's WebUI popups (test/helpers/browser.ts)", async (t) => {
  // A third of Chromium's CPU in a browser test when they run; a Chromium that renames their features brings them
  // back, and this says so.
  const v = await openPage(browser, { width: 800, height: 600 }, 'data:text/html,<p>page</p>');
  const cdp = await browser.newBrowserCDPSession();
  const { targetInfos } = await cdp.send('Target.getTargets');
  await cdp.detach();
  await v.context.close();
  t.true(targetInfos.some((target) => target.type === 'page'));
  t.deepEqual(
    targetInfos.filter((target) => target.type === 'browser_ui').map((target) => target.url),
    [],
  );
});
