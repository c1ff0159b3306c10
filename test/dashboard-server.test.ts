// How the api serves the dashboard: its page at / and at its page URLs with a strict CSP (no inline script, this
// origin only), its content-hashed files cached for a year, and every other path as before (API routes, /docs,
// /account, unknown files).
import test from 'ava';
import { buildDashboard } from './helpers/dashboard.ts';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { requestAt } from './helpers/request.ts';

let p: Platform;
test.before(async () => {
  await buildDashboard();
  p = await startPlatform();
});
test.after.always(() => p?.close());

test('the page at / and each page URL: the built index with a strict CSP, no inline script', async (t) => {
  for (const url of [
    '/',
    '/sign-in',
    '/sign-up',
    '/verify',
    '/reset-password',
    '/dashboard/emails',
    '/dashboard/emails/x',
  ]) {
    const res = await requestAt(p.url, 'GET', url, { headers: { accept: 'text/html' } });
    t.is(res.status, 200, url);
    t.regex(res.headers.get('content-type') ?? '', /^text\/html/);
    t.is(res.headers.get('cache-control'), 'no-store');
    const csp = res.headers.get('content-security-policy') ?? '';
    t.regex(csp, /default-src 'none'/);
    t.regex(csp, /script-src 'self'(;|$)/);
    t.regex(csp, /style-src 'self'(;|$)/);
    t.regex(csp, /frame-ancestors 'none'/);
    t.notRegex(csp, /unsafe-|https?:/, 'no unsafe source, no other origin');
    t.regex(res.text, /<div id="root"><\/div>/);
    t.notRegex(res.text, /<script(?![^>]*\bsrc=)[^>]*>/, 'every script is a file');
    t.notRegex(res.text, /(src|href)="(https?:)?\/\//, 'nothing from another origin');
  }
});

test('assets: content-hashed names, cached a year, gzip when asked; an unknown one is the JSON 404', async (t) => {
  const index = await requestAt(p.url, 'GET', '/');
  const scripts = [...index.text.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]);
  t.true(scripts.some((s) => s.endsWith('.js')) && scripts.some((s) => s.endsWith('.css')), index.text);
  for (const asset of scripts) {
    t.regex(asset, /-[A-Za-z0-9_-]{8}\.(js|css|svg)$/);
    const res = await fetch(p.url + asset, { headers: { 'user-agent': 'test', 'accept-encoding': 'gzip' } });
    t.is(res.status, 200);
    t.is(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    t.is(res.headers.get('content-encoding'), 'gzip');
    const type = { js: /^text\/javascript/, css: /^text\/css/, svg: /^image\/svg\+xml/ }[asset.split('.').pop()!];
    t.regex(res.headers.get('content-type') ?? '', type!);
  }
  // The budget: the initial JavaScript under 300 KB gzipped.
  let gzipped = 0;
  for (const asset of scripts.filter((s) => s.endsWith('.js'))) {
    const res = await fetch(p.url + asset, { headers: { 'user-agent': 'test', 'accept-encoding': 'gzip' } });
    gzipped += Number(res.headers.get('content-length'));
  }
  t.true(gzipped > 0 && gzipped < 300 * 1024, `${gzipped} bytes of JavaScript gzipped`);
  const missing = await requestAt(p.url, 'GET', '/assets/nothing-12345678.js');
  t.is(missing.status, 404);
  t.is(missing.body.name, 'not_found');
});

test('API routes, the reference and the account page are unaffected', async (t) => {
  const emails = await requestAt(p.url, 'GET', '/emails', { headers: { accept: 'text/html' } });
  t.is(emails.status, 401);
  t.is(emails.body.name, 'missing_api_key');
  const v1 = await requestAt(p.url, 'GET', '/api/v1/emails');
  t.is(v1.status, 401);
  const docs = await requestAt(p.url, 'GET', '/docs');
  t.regex(docs.text, /Postwerk API reference/);
  const account = await requestAt(p.url, 'GET', '/account');
  t.regex(account.text, /Postwerk account/);
  const unknown = await requestAt(p.url, 'GET', '/no-such-page');
  t.is(unknown.status, 404);
  t.is(unknown.body.name, 'not_found');
  const client = await requestAt(p.url, 'GET', '/', { headers: { authorization: 'Bearer rk_x' } });
  t.is(client.status, 404, 'an API client asking for / gets the API answer');
  t.is(client.body.name, 'not_found');
  const post = await requestAt(p.url, 'POST', '/', { body: {} });
  t.true(post.status === 404 || post.status === 405, String(post.status));
});
