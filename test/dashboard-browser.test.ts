// A person in a real browser (Debian's headless Chromium) on the dashboard, against the real api and mta: signs up,
// confirms by the mailed token, signs in (a wrong password first), makes a team, creates an API key (shown once),
// sends with it through the resend SDK, sees the email in the list, opens it and watches it reach `delivered`;
// adds a domain (a bad name first) and reads its records; a viewer sees no create button; MFA sign-in; a password
// reset. Every page is checked by axe-core and photographed at 1280 and 390 pixels.
import test, { type ExecutionContext } from 'ava';
import type { Browser, Page, Request, Response } from 'playwright-core';
import { Resend } from 'resend';
import { generate } from 'otplib';
import { launchChromium, openPage, DESKTOP, type Visit } from './helpers/browser.ts';
import { buildDashboard, look, signInThroughPage } from './helpers/dashboard.ts';
import {
  CookieClient,
  linkToken,
  PEOPLE,
  signUpAndVerify,
  startAccountsWorld,
  type AccountsWorld,
} from './helpers/accounts.ts';
import { until } from './helpers/wait.ts';

let world: AccountsWorld;
let browser: Browser;
test.before(async () => {
  await buildDashboard();
  world = await startAccountsWorld();
  browser = await launchChromium();
});
test.after.always(async () => {
  await browser?.close();
  await world?.close();
});

const PASSWORD = 'a long dashboard password';

/** Console errors but the expected refusals (the signed-out /me, a wrong password, a refused form). */
const unexpected = (v: Visit) => v.errors.filter((e) => !/status of (401|404|422)/.test(e));

const signIn = (page: Page, url: string, email: string, password = PASSWORD) =>
  signInThroughPage(page, url, email, password);

/**
 * The page's answer to `go`, `text` or a refusal (role=alert), as text: a refusal fails the step with its own words
 * and the requests the page made, and a page that says neither within the wait fails with what it does say.
 */
async function answered(page: Page, go: () => Promise<unknown>, text: string): Promise<string> {
  const calls: string[] = [];
  const onResponse = (r: Response) => {
    const u = new URL(r.url());
    if (!u.pathname.startsWith('/assets/')) calls.push(`${r.request().method()} ${u.pathname} ${r.status()}`);
  };
  page.on('response', onResponse);
  await go();
  const answer = page.getByText(text).or(page.getByRole('alert')).first();
  try {
    await answer.waitFor();
    const said = await answer.innerText();
    // A refusal names the requests the page made meanwhile (a second POST of one token, say): the step's cause.
    if (!said.includes(text)) throw new Error(`the page refused: ${said}\nits requests: ${calls.join('; ')}`);
    return said;
  } catch (err) {
    throw new Error(`${(err as Error).message}\nthe page says: ${await page.locator('body').innerText()}`);
  } finally {
    page.off('response', onResponse);
  }
}

test.serial('sign up, verify, sign in, make a team, create a key, send, see and open the email', async (t) => {
  t.timeout(240_000);
  const url = world.w.p.url;
  const email = `owner@${PEOPLE}`;
  const v = await openPage(browser, DESKTOP, `${url}/sign-up`);
  const { page } = v;
  await page.locator('#sign-up-form').waitFor();
  await look(t, page, 'sign-up');
  await page.locator('#sign-up-form input[name=name]').fill('<b>Owner</b>');
  await page.locator('#sign-up-form input[name=email]').fill(email);
  await page.locator('#sign-up-form input[name=password]').fill(PASSWORD);
  await page.locator('#sign-up-form button[type=submit]').click();
  await page.getByText('We sent a link').waitFor();
  await look(t, page, 'sign-up-sent');

  const token = linkToken((await world.mailTo(email)).text, 'verify');
  const verify = () => page.goto(`${url}/verify#token=${encodeURIComponent(token)}`);
  let posted = 0;
  const onRequest = (r: Request) => void (r.method() === 'POST' && r.url().endsWith('/auth/verify-email') && posted++);
  page.on('request', onRequest);
  t.regex(await answered(page, verify, 'Your address is confirmed'), /Your address is confirmed/);
  await page.waitForLoadState('networkidle');
  page.off('request', onRequest);
  // The token is spent by its first use: the page posts it once, however often it renders.
  t.is(posted, 1, 'one POST /auth/verify-email');
  await look(t, page, 'verify-done');
  await page.goto(`${url}/verify#token=pwv_not-a-token`);
  await page.getByRole('alert').waitFor();
  await look(t, page, 'verify-error');

  await signIn(page, url, email, 'not the password');
  await page.getByRole('alert').waitFor();
  t.regex((await page.getByRole('alert').textContent()) ?? '', /\S/, 'the api message is shown');
  await look(t, page, 'sign-in-error');
  await signIn(page, url, email);
  await page.locator('#new-team-form').waitFor();
  await look(t, page, 'new-team');
  await page.locator('#new-team-form input[name=name]').fill('Acme <script>alert(1)</script>');
  await page.locator('#new-team-form button[type=submit]').click();
  await page.getByText('Nothing sent in this range yet').waitFor();
  await page.goto(`${url}/dashboard/emails`);
  await page.getByText('No emails yet').waitFor();
  t.is(await page.locator('#who').textContent(), email);
  t.is(await page.locator('.team option:checked').textContent(), 'Acme <script>alert(1)</script>', 'shown as text');
  await look(t, page, 'emails-empty');

  const key = await createKey(t, page, url);
  await sendAndOpen(t, page, url, key, email);
  await domains(t, page, url);
  await suppressions(t, page, url);
  t.deepEqual(unexpected(v), []);
  await v.context.close();
});

async function createKey(t: ExecutionContext, page: Page, url: string): Promise<string> {
  await page.goto(`${url}/dashboard/api-keys`);
  await page.getByText('No API keys yet').waitFor();
  await look(t, page, 'api-keys-empty');
  await page.locator('#new-key-form input[name=name]').fill('Production <i>key</i>');
  await page.locator('#new-key-form button[type=submit]').click();
  const token = ((await page.locator('#new-key-token').textContent()) ?? '').trim();
  t.regex(token, /^[a-z]+_[A-Za-z0-9]{20,}$/);
  await look(t, page, 'api-key-shown-once');
  await page.reload();
  await page.getByRole('cell', { name: 'Production <i>key</i>', exact: true }).waitFor();
  t.false((await page.content()).includes(token), 'the token is shown once only');
  t.is(await page.locator('#new-key-token').count(), 0);
  await look(t, page, 'api-keys');
  return token;
}

async function sendAndOpen(t: ExecutionContext, page: Page, url: string, key: string, to: string) {
  const resend = new Resend(key, { baseUrl: url } as never);
  const domains = await resend.domains.list();
  const from = `hello@${domains.data!.data[0].name}`;
  const subject = 'Dashboard <b>hello</b>';
  const sent = await resend.emails.send({ from, to, subject, html: '<p id="inside">Hi from the frame</p>' });
  t.falsy(sent.error, JSON.stringify(sent.error));
  await page.goto(`${url}/dashboard/emails`);
  const link = page.getByRole('link', { name: subject });
  await link.waitFor();
  await look(t, page, 'emails');
  // The api searches (test/dashboard-emails.test.ts has the rest): none, then this one.
  await page.getByLabel('Search emails').fill('nothing like it');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.getByText('No email’s subject, sender or recipient contains').waitFor();
  await page.getByLabel('Search emails').fill('hello');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.waitForURL(/search=hello/);
  await link.click();
  await page.waitForURL(`${url}/dashboard/emails/${sent.data!.id}`);
  // The URL moves before the email's page replaces the list (a CI run read the list's h1 here): wait for the heading
  // to change, then check it is the subject as text (rendered as HTML it would read "Dashboard hello").
  await page.waitForFunction(() => document.querySelector('h1')?.textContent !== 'Emails');
  t.is(await page.locator('h1').textContent(), subject, 'the subject as text');
  const frame = page.frameLocator('iframe[title="The email\'s HTML"]');
  t.is(await frame.locator('#inside').textContent(), 'Hi from the frame');
  t.is(await page.locator('iframe').getAttribute('sandbox'), '');
  t.is(await page.getByLabel(/Load remote images/).count(), 0, 'no remote image named: no choice offered');
  await until(
    async () => {
      await page.reload();
      await page.locator('h1').waitFor();
      return (await page.locator('.timeline .badge.delivered').count()) > 0;
    },
    { timeoutMs: 60_000, intervalMs: 500, what: 'the email delivered' },
  );
  t.is(
    await page
      .getByRole('row', { name: new RegExp(to) })
      .locator('.badge')
      .textContent(),
    'delivered',
  );
  await page.locator('.transcript summary').first().click();
  t.regex((await page.locator('.transcript pre').first().textContent()) ?? '', /^C: MAIL FROM:/m, 'the transcript');
  await look(t, page, 'email');
  await page.goto(`${url}/dashboard/emails/00000000-0000-4000-8000-000000000000`);
  await page.getByRole('alert').waitFor();
  await look(t, page, 'email-not-found');
}

async function domains(t: ExecutionContext, page: Page, url: string) {
  await page.goto(`${url}/dashboard/domains`);
  await page.locator('#add-domain-form').waitFor();
  await page.locator('table').waitFor();
  await look(t, page, 'domains');
  await page.locator('#add-domain-form input[name=name]').fill('not a domain');
  await page.locator('#add-domain-form button[type=submit]').click();
  await page.getByRole('alert').waitFor();
  t.regex((await page.getByRole('alert').textContent()) ?? '', /name/, 'the refused field is named');
  await look(t, page, 'domains-error');
  await page.locator('#add-domain-form input[name=name]').fill('shop-dashboard.test');
  await page.locator('#add-domain-form button[type=submit]').click();
  await page.getByRole('heading', { name: 'shop-dashboard.test' }).waitFor();
  t.true((await page.getByRole('button', { name: /Copy the .* value/ }).count()) >= 2);
  await page.getByRole('button', { name: 'Verify DNS records' }).click();
  await page.getByText('Verification started').waitFor();
  await look(t, page, 'domain');
}

async function suppressions(t: ExecutionContext, page: Page, url: string) {
  await page.goto(`${url}/dashboard/suppressions`);
  await page.getByText('No suppressed addresses').waitFor();
  await look(t, page, 'suppressions-empty');
  await page.locator('#add-suppression-form input[name=email]').fill('<b>not an address</b>');
  await page.locator('#add-suppression-form button[type=submit]').click();
  await page.getByRole('alert').waitFor();
  t.regex((await page.getByRole('alert').textContent()) ?? '', /email/, 'the refused field is named');
  await look(t, page, 'suppressions-error');
  await page.locator('#add-suppression-form input[name=email]').fill(`blocked@${PEOPLE}`);
  await page.locator('#add-suppression-form button[type=submit]').click();
  await page.getByRole('cell', { name: `blocked@${PEOPLE}`, exact: true }).waitFor();
  await look(t, page, 'suppressions');
  await page.getByRole('button', { name: `Remove blocked@${PEOPLE}` }).click();
  await page.getByText('No suppressed addresses').waitFor();
}

test.serial('a viewer sees no create or revoke buttons; MFA sign-in; a password reset', async (t) => {
  t.timeout(180_000);
  const url = world.w.p.url;
  const owner = new CookieClient(url);
  await owner.request('POST', '/auth/login', { body: { email: `owner@${PEOPLE}`, password: PASSWORD } });
  const teamId = (await owner.request('GET', '/me')).body.current_team_id;
  const email = `viewer@${PEOPLE}`;
  await signUpAndVerify(world, email, PASSWORD);
  const invited = await owner.request('POST', `/teams/${teamId}/invitations`, { body: { email, role: 'viewer' } });
  t.is(invited.status, 201, invited.text);
  const viewer = new CookieClient(url);
  await viewer.request('POST', '/auth/login', { body: { email, password: PASSWORD } });
  const invite = linkToken((await world.mailTo(email, 2)).text, 'invite');
  t.is((await viewer.request('POST', '/team-invitations/accept', { body: { token: invite } })).status, 200);
  const enrolment = await viewer.request('POST', '/auth/mfa/enrol', { body: {} });
  const secret = enrolment.body.secret;
  const on = await viewer.request('POST', '/auth/mfa/confirm', {
    body: { code: await generate({ secret }), password: PASSWORD },
  });
  t.is(on.status, 200, on.text);

  const v = await openPage(browser, DESKTOP);
  const { page } = v;
  await signIn(page, url, email);
  await page.locator('#mfa-form').waitFor();
  await look(t, page, 'sign-in-mfa');
  const next = await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 });
  await page.locator('#mfa-form input[name=code]').fill(next);
  await page.locator('#mfa-form button[type=submit]').click();
  await page.locator('#who').waitFor();
  t.is(await page.locator('.role').textContent(), 'viewer');
  await page.goto(`${url}/dashboard/api-keys`);
  await page.getByRole('cell', { name: 'Production <i>key</i>', exact: true }).waitFor();
  t.is(await page.locator('#new-key-form').count(), 0, 'no create form for a viewer');
  t.is(await page.getByRole('button', { name: 'Revoke' }).count(), 0);
  await look(t, page, 'api-keys-viewer');
  await page.goto(`${url}/dashboard/domains`);
  await page.locator('table').waitFor();
  t.is(await page.locator('#add-domain-form').count(), 0, 'no add form for a viewer');
  await page.goto(`${url}/dashboard/suppressions`);
  await page.getByText('No suppressed addresses').waitFor();
  t.is(await page.locator('#add-suppression-form').count(), 0, 'no add form for a viewer');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.locator('#sign-in-form').waitFor();

  await page.goto(`${url}/reset-password`);
  await look(t, page, 'reset-request');
  await page.locator('#reset-form input[name=email]').fill(email);
  await page.locator('#reset-form button[type=submit]').click();
  await page.getByText('a link to reset its password is on its way').waitFor();
  const reset = linkToken((await world.mailTo(email, 3)).text, 'reset');
  await page.goto(`${url}/reset-password#token=${encodeURIComponent(reset)}`);
  await page.locator('#new-password-form input[name=password]').fill('another long password');
  await look(t, page, 'reset-new-password');
  await page.locator('#new-password-form button[type=submit]').click();
  await page.getByText('Your password is changed').waitFor();
  t.deepEqual(unexpected(v), []);
  await v.context.close();
});
