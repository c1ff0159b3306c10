// Dashboard fixes in a real browser (Debian's headless Chromium) against the real api: an email's HTML in its own
// page under a policy made for an email (its inline styles apply, its script does not run, remote images only when
// asked; another team's email is a 404); a person without a team reaches their account's settings; a list that
// showed a 401 loads again once signed in again; the signed-in frame's start-up requests (how many one after
// another before a page's own data arrives).
import test from 'ava';
import type { Page } from 'playwright-core';
import { openPage, DESKTOP } from './helpers/browser.ts';
import { makeUser, signIn as cookieSignIn } from './helpers/accounts.ts';
import { insertEmail } from './helpers/emails.ts';
import { signInThroughPage } from './helpers/dashboard.ts';
import { until } from './helpers/wait.ts';
import {
  look,
  PASSWORD,
  signInPage,
  startTemplatesWorld,
  unexpected,
  type TemplatesWorld,
} from './helpers/dashboard-templates.ts';

let world: TemplatesWorld;
let emailId: string;
const TRACKER = 'tracker.postwerk-test.invalid';
const HTML = [
  '<html><head><style>p.brand { color: rgb(200, 0, 0); font-size: 31px; }</style></head><body>',
  '<p class="brand">Styled by its own sheet</p>',
  `<img src="https://${TRACKER}/pixel.gif" alt="" width="1" height="1">`,
  "<script>document.body.setAttribute('data-ran', 'yes'); document.title = 'script ran';</script>",
  '</body></html>',
].join('');

test.before(async (t) => {
  t.timeout(300_000);
  world = await startTemplatesWorld();
  emailId = await insertEmail(world.p.db, world.p.deps.blobs, {
    teamId: world.teamId,
    domain: null,
    to: ['reader@people.test'],
    subject: 'A styled <b>email</b>',
    html: HTML,
  });
});
test.after.always(async () => {
  await world?.close();
});

const frameOf = (page: Page) => page.frameLocator('iframe.preview');

test.serial(
  "an email's HTML: its own styles apply, its script does not run, remote images only when asked",
  async (t) => {
    t.timeout(180_000);
    const url = world.p.url;
    const v = await openPage(world.browser, DESKTOP);
    const { page } = v;
    const failed: { url: string; reason: string }[] = [];
    page.on('requestfailed', (r) => failed.push({ url: r.url(), reason: r.failure()?.errorText ?? '' }));
    await signInPage(page, url, world.owner.email);
    await page.goto(`${url}/dashboard/emails/${emailId}`);
    const brand = frameOf(page).locator('p.brand');
    await brand.waitFor({ timeout: 15_000 });
    t.is(await brand.evaluate((el) => getComputedStyle(el).color), 'rgb(200, 0, 0)', 'the inline <style> applies');
    t.is(await brand.evaluate((el) => getComputedStyle(el).fontSize), '31px');
    t.is(await frameOf(page).locator('body').getAttribute('data-ran'), null, 'the script did not run');
    // A blocked image never leaves the browser (failed for 'csp'); one let through is looked up in the DNS
    // (ERR_NAME_NOT_RESOLVED for this .invalid host): what a tracker's host would see.
    await page.waitForTimeout(500);
    t.deepEqual(
      [...new Set(failed.filter((f) => f.url.includes(TRACKER)).map((f) => f.reason))],
      ['csp'],
      'the remote image is blocked by default',
    );
    t.false(await page.getByLabel(/Load remote images/).isChecked());
    await look(t, page, world.shots, 'email-html');

    failed.length = 0;
    await page.getByLabel(/Load remote images/).check();
    await until(async () => failed.some((f) => f.url.includes(TRACKER) && f.reason === 'net::ERR_NAME_NOT_RESOLVED'), {
      timeoutMs: 15_000,
      intervalMs: 100,
      what: 'the remote image asked once allowed',
    });
    await frameOf(page).locator('p.brand').waitFor();
    t.is(await frameOf(page).locator('body').getAttribute('data-ran'), null, 'still no script');
    t.deepEqual(
      unexpected(v).filter((e) => !/Content Security Policy|ERR_NAME_NOT_RESOLVED|Blocked script execution/.test(e)),
      [],
    );
    await v.context.close();

    // The page itself: the email's policy (no script source at all; inline images only by default) and team-scoped.
    const own = await world.owner.c.request('GET', `/emails/${emailId}/html`);
    t.is(own.status, 200);
    t.regex(own.headers.get('content-type') ?? '', /^text\/html/);
    const csp = own.headers.get('content-security-policy') ?? '';
    t.regex(csp, /default-src 'none'/);
    t.regex(csp, /img-src 'self' data:;/);
    t.regex(csp, /sandbox allow-popups/);
    t.notRegex(csp, /script-src/);
    const remote = await world.owner.c.request('GET', `/emails/${emailId}/html?images=remote`);
    t.regex(remote.headers.get('content-security-policy') ?? '', /img-src 'self' https: data:;/);
    await makeUser(world.p.db, 'stranger@people.test', PASSWORD, 'Stranger');
    const stranger = await cookieSignIn(url, 'stranger@people.test', PASSWORD);
    const team = await stranger.request('POST', '/teams', { body: { name: 'Other team' } });
    await stranger.request('POST', `/teams/${team.body.id}/switch`, { body: {} });
    const foreign = await stranger.request('GET', `/emails/${emailId}/html`);
    t.is(foreign.status, 404, "another team's email is not found");
    t.is(foreign.body.name, 'not_found');
  },
);

test.serial('a person without a team reaches two-factor, sessions and password', async (t) => {
  t.timeout(180_000);
  const url = world.p.url;
  await makeUser(world.p.db, 'teamless@people.test', PASSWORD, 'No Team');
  const v = await openPage(world.browser, DESKTOP);
  const { page } = v;
  await signInThroughPage(page, url, 'teamless@people.test', PASSWORD);
  await page.getByRole('heading', { name: 'Create your team' }).waitFor();
  await page.getByRole('link', { name: 'two-factor' }).click();
  await page.waitForURL(`${url}/dashboard/settings/mfa`);
  await page.getByRole('heading', { name: /Two-factor/ }).waitFor();
  const sections = await page.getByRole('navigation', { name: 'Settings' }).getByRole('link').allTextContents();
  t.deepEqual(sections, ['Two-factor', 'Sessions', 'Password', 'Create a team'], 'only the account sections');
  await look(t, page, world.shots, 'teamless-mfa');
  await page.getByRole('link', { name: 'Sessions' }).click();
  await page.getByRole('heading', { name: 'Sessions' }).waitFor();
  await page.getByText('this browser').first().waitFor();
  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Password' }).click();
  await page.getByRole('heading', { name: 'Password' }).waitFor();
  await page.getByRole('button', { name: 'Mail me a link' }).click();
  await page.locator('#password-reset-sent').waitFor();
  await look(t, page, world.shots, 'teamless-password');
  // A team page still asks for a team first.
  await page.goto(`${url}/dashboard/emails`);
  await page.getByRole('heading', { name: 'Create your team' }).waitFor();
  t.deepEqual(unexpected(v), []);
  await v.context.close();
});

test.serial('a list that showed a 401 loads again once signed in again', async (t) => {
  t.timeout(180_000);
  const url = world.p.url;
  const v = await openPage(world.browser, DESKTOP);
  const { page } = v;
  await signInPage(page, url, world.owner.email);
  await page.getByRole('link', { name: 'Templates', exact: true }).click();
  await page.getByRole('heading', { name: 'Templates' }).waitFor();
  // The Templates page's list answered first (on a slow machine it may still be on its way, and a 401 there opens the
  // dialog before the click below).
  await page.getByText('Loading templates').waitFor({ state: 'detached' });
  // The session ends server-side while the page is open; the next list asked answers 401.
  await world.p.db('sessions').del();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Emails' }).click();
  const dialog = page.getByRole('dialog', { name: 'Your session has ended' });
  await dialog.waitFor();
  await page.locator('main .error').first().waitFor();
  t.regex(await page.locator('main .error').first().innerText(), /sign|session|401/i, 'the 401 is shown');
  await dialog.locator('input[name=password]').fill(PASSWORD);
  await dialog.locator('button[type=submit]').click();
  await dialog.waitFor({ state: 'detached' });
  await page.getByRole('link', { name: 'A styled <b>email</b>' }).waitFor({ timeout: 15_000 });
  t.is(await page.locator('main .error').count(), 0, 'the error is gone: the list loaded again');
  await look(t, page, world.shots, 'emails-after-sign-in-again');
  await v.context.close();
});

test.serial("start-up: a page's own data follows /me directly (two round trips one after another)", async (t) => {
  t.timeout(180_000);
  const url = world.p.url;
  const v = await openPage(world.browser, DESKTOP);
  const { page } = v;
  await signInPage(page, url, world.owner.email);
  await page.goto(`${url}/dashboard/emails`);
  await page.getByRole('link', { name: 'A styled <b>email</b>' }).waitFor();
  // The api's requests of this load (not the page's files): each one's depth is one more than the deepest request
  // that had finished before it started.
  const chain = await page.evaluate(() => {
    const api = (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).filter(
      (e) => e.initiatorType === 'fetch',
    );
    const depth = new Map<PerformanceResourceTiming, number>();
    const sorted = [...api].sort((a, b) => a.startTime - b.startTime);
    for (const e of sorted) {
      const before = sorted.filter((o) => o !== e && o.responseEnd <= e.startTime).map((o) => depth.get(o) ?? 1);
      depth.set(e, 1 + Math.max(0, ...before));
    }
    return sorted.map((e) => ({ path: new URL(e.name).pathname, depth: depth.get(e)! }));
  });
  t.log(chain.map((c) => `${c.depth} ${c.path}`).join(', '));
  t.deepEqual(
    chain.map((c) => c.path),
    ['/me', '/emails'],
    'no members request: /me names the role',
  );
  t.is(Math.max(...chain.map((c) => c.depth)), 2, 'two round trips one after another (three before)');
  const me = await (await cookieSignIn(url, world.owner.email, PASSWORD)).request('GET', '/me');
  t.is(me.body.current_team_role, 'admin');
  await v.context.close();
});
