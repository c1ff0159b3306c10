// The consent page in headless Chromium. Granting fewer scopes than asked: every scope asked is ticked, the
// person unticks one with the keyboard (the last ticked one cannot be unticked: granting nothing is Deny), allows,
// and the client's token carries only the scopes left ticked: an operation of the unticked scope is refused, the
// grant lists what was granted. Through the API alone, a scope the client did not ask for cannot be granted. The
// client's https logo is shown (the page's CSP lets https images in); Deny sends the browser back to the client with
// `access_denied` and grants nothing. Screenshots at 1280 and 390 pixels, axe-core.
import test from 'ava';
import type { Browser } from 'playwright-core';
import { launchChromium, openPage, screenshotDir, DESKTOP } from './helpers/browser.ts';
import { buildDashboard, lookAt } from './helpers/dashboard.ts';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { freePort } from './helpers/ports.ts';
import {
  Agent,
  authorizeUrl,
  follow,
  pkce,
  REDIRECT,
  registerClient,
  signedInWithTeam,
  tokenRequest,
} from './helpers/oauth.ts';
import { until } from './helpers/wait.ts';

let p: Platform;
let base: string;
let browser: Browser;

test.before(async () => {
  await buildDashboard();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  p = await startPlatform({ PORT: String(port), PUBLIC_BASE_URL: base, OAUTH_REGISTRATIONS_PER_HOUR: '1000' });
  browser = await launchChromium();
});
test.after.always(async () => {
  await browser?.close();
  await p?.close();
});

test('the person unticks a scope: the token carries only those left ticked', async (t) => {
  t.timeout(180_000);
  const agent = new Agent(base);
  await signedInWithTeam(p.db, agent, 'fewer@people.test');
  const reg = await registerClient(base, {
    scope: 'domains:read emails:read offline_access',
    client_name: 'Picky Tool',
  });
  t.is(reg.status, 201, reg.text);
  const { verifier, challenge } = pkce();
  const start = authorizeUrl({
    clientId: reg.body.client_id,
    scope: 'domains:read emails:read offline_access',
    resource: `${base}/`,
    challenge,
  });

  const visit = await openPage(browser, DESKTOP);
  await visit.context.addCookies(
    ['postwerk_session', 'postwerk_csrf'].map((name) => ({ name, value: agent.jar.get(name)!, url: base })),
  );
  let landed: string | undefined;
  await visit.page.route('http://127.0.0.1:9/**', (route) => {
    landed = route.request().url();
    return route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the client' });
  });
  await visit.page.goto(base + start);
  const page = visit.page;
  const domains = page.getByRole('checkbox', { name: /See your domains/ });
  const emails = page.getByRole('checkbox', { name: /See your emails/ });
  await emails.waitFor();
  t.true(await domains.isChecked());
  t.true(await emails.isChecked());
  const shots = await screenshotDir('oauth-consent-scopes');
  const all = await lookAt(page, shots, 'consent-all-ticked');
  t.deepEqual(all.violations, []);
  t.true(all.overflow <= 0, 'fits a phone');

  // By keyboard: to the emails box, Space unticks it; the domains box is then the last and cannot be unticked.
  await emails.focus();
  await page.keyboard.press('Space');
  t.false(await emails.isChecked());
  t.true(await domains.isDisabled(), 'the last ticked scope stays');
  const allow = page.getByRole('button', { name: 'Allow 1 of 2' });
  await allow.waitFor();
  const fewer = await lookAt(page, shots, 'consent-one-unticked');
  t.deepEqual(fewer.violations, []);
  t.true(fewer.overflow <= 0);
  await allow.click();
  await until(async () => landed !== undefined, { what: 'the browser back at the client' }).catch(async (err) => {
    throw new Error(`${err.message}: ${await page.locator('main').innerText()}`);
  });
  const code = new URL(landed!).searchParams.get('code');
  t.truthy(code, landed);
  await visit.context.close();

  const tokens = await tokenRequest(base, {
    grant_type: 'authorization_code',
    code: code!,
    redirect_uri: REDIRECT,
    client_id: reg.body.client_id,
    code_verifier: verifier,
    resource: `${base}/`,
  });
  t.is(tokens.status, 200, tokens.text);
  t.is(tokens.body.scope, 'domains:read');
  t.truthy(tokens.body.refresh_token, 'offline_access was kept');
  const token = tokens.body.access_token;
  t.is((await p.request('GET', '/domains', { key: token })).status, 200);
  const refused = await p.request('GET', '/emails', { key: token });
  t.is(refused.status, 403);
  t.is(refused.body.name, 'invalid_permission');
  // A refreshed token carries no more than was granted.
  const refreshed = await tokenRequest(base, {
    grant_type: 'refresh_token',
    refresh_token: tokens.body.refresh_token,
    client_id: reg.body.client_id,
    resource: `${base}/`,
  });
  t.is(refreshed.status, 200, refreshed.text);
  t.is((await p.request('GET', '/emails', { key: refreshed.body.access_token })).status, 403);
  const grants = await agent.go('GET', '/oauth/grants');
  t.deepEqual(grants.body.data[0].scopes, ['domains:read']);
});

test('through the API: a scope not asked for, or none at all, cannot be granted; nothing is granted', async (t) => {
  const agent = new Agent(base);
  await signedInWithTeam(p.db, agent, 'stranger@people.test');
  const reg = await registerClient(base, { scope: 'domains:read emails:read' });
  const url = authorizeUrl({ clientId: reg.body.client_id, scope: 'domains:read', resource: `${base}/` });
  const at = await follow(agent, await agent.go('GET', url));
  const uid = new URL(at.location!, base).pathname.split('/').pop()!;
  const strange = await agent.go('POST', `/oauth/consent/${uid}/confirm`, { json: { scopes: ['emails:read'] } });
  t.is(strange.status, 422, strange.text);
  t.like(strange.body, { name: 'validation_error', errors: [{ path: 'scopes' }] });
  t.regex(strange.body.message, /emails:read/);
  const none = await agent.go('POST', `/oauth/consent/${uid}/confirm`, { json: { scopes: [] } });
  t.is(none.status, 422, none.text);
  t.is((await agent.go('GET', '/oauth/grants')).body.data.length, 0);
  // The same request can still be granted as asked.
  const ok = await agent.go('POST', `/oauth/consent/${uid}/confirm`, { json: { scopes: ['domains:read'] } });
  t.is(ok.status, 200, ok.text);
});

/** A 1x1 PNG: the logo a client registered, served to the browser by the test. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

test('the page shows the client’s https logo (its CSP lets it load); Deny answers access_denied and grants nothing', async (t) => {
  t.timeout(180_000);
  const agent = new Agent(base);
  await signedInWithTeam(p.db, agent, 'denier@people.test');
  const logo = 'https://assets.logo-tool.test/logo.png';
  const reg = await registerClient(base, { client_name: 'Logo Tool', logo_uri: logo, scope: 'domains:read' });
  t.is(reg.status, 201, reg.text);
  const start = authorizeUrl({ clientId: reg.body.client_id, scope: 'domains:read', resource: `${base}/` });
  const state = new URL(start, base).searchParams.get('state');

  const visit = await openPage(browser, DESKTOP);
  await visit.context.addCookies(
    ['postwerk_session', 'postwerk_csrf'].map((name) => ({ name, value: agent.jar.get(name)!, url: base })),
  );
  let landed: string | undefined;
  await visit.page.route('http://127.0.0.1:9/**', (route) => {
    landed = route.request().url();
    return route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the client' });
  });
  // The logo's host is the test's: the browser asks for it (the CSP allowing it), the test answers.
  let fetched = 0;
  await visit.page.route(logo, (route) => {
    fetched++;
    return route.fulfill({ status: 200, contentType: 'image/png', body: PNG });
  });
  const page = visit.page;
  const answer = await page.goto(base + start);
  t.regex(
    answer!.headers()['content-security-policy'] ?? '',
    /img-src [^;]*https:/,
    'the consent page lets https images in',
  );
  const img = page.locator('img.client-logo');
  await img.waitFor();
  t.is(await img.getAttribute('src'), logo);
  await until(() => img.evaluate((el) => (el as HTMLImageElement).complete), { what: 'the logo loaded' });
  t.true(await img.evaluate((el) => (el as HTMLImageElement).naturalWidth > 0), 'the logo rendered, not refused');
  t.is(fetched, 1);
  t.regex(await page.locator('main').innerText(), /Logo Tool wants access to the team Granting team/);
  const shots = await screenshotDir('oauth-consent-scopes');
  const seen = await lookAt(page, shots, 'consent-logo');
  t.deepEqual(seen.violations, []);

  await page.getByRole('button', { name: 'Deny' }).click();
  await until(async () => landed !== undefined, { what: 'the browser back at the client' });
  const back = new URL(landed!);
  t.is(`${back.origin}${back.pathname}`, REDIRECT);
  t.is(back.searchParams.get('error'), 'access_denied');
  t.is(back.searchParams.get('state'), state);
  t.is(back.searchParams.get('code'), null);
  await visit.context.close();
  // Nothing granted: no grant of ours, none of the provider's, none listed.
  t.is((await p.db('oauth_grants').where({ client_id: reg.body.client_id })).length, 0);
  const providerGrants = await p
    .db('oauth_models')
    .where({ model: 'Grant' })
    .whereRaw(`payload->>'clientId' = ?`, [reg.body.client_id]);
  t.is(providerGrants.length, 0);
  t.is((await agent.go('GET', '/oauth/grants')).body.data.length, 0);
});
