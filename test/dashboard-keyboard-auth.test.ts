// The pages a person sees before the dashboard, used without a mouse in a real browser (Debian's headless Chromium)
// against the real api, as test/dashboard-keyboard.test.ts uses the dashboard's (keyboardOnly in
// test/helpers/dashboard.ts: Tab reaches every link, button and field with a visible focus ring, then the page's main
// action by keys alone): sign-up, the address confirmation, both password reset steps, an invitation's link signed
// out and signed in, and the first team of a person without one. Sign-in is dashboard-settings-keyboard's.
import test from 'ava';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, openPage, DESKTOP } from './helpers/browser.ts';
import { buildDashboard, fillSignIn, keyboardOnly, signInThroughPage, tabToName } from './helpers/dashboard.ts';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { person, unexpected, type Person } from './helpers/dashboard-ops.ts';
import { makeUser } from './helpers/accounts.ts';
import { createInvitation } from '../shared/teams/invitations.ts';
import { signUp } from '../shared/accounts/signup.ts';
import { requestReset } from '../shared/accounts/reset.ts';

let p: Platform;
let browser: Browser;
let owner: Person;
let url: string;

test.before(async (t) => {
  t.timeout(300_000);
  await buildDashboard();
  p = await startPlatform();
  url = p.url;
  browser = await launchChromium();
  owner = await person(p, 'kb-owner@people.test');
});
test.after.always(async () => {
  await browser?.close();
  await p?.close();
});

/** The page at `path`, once `ready` shows. */
async function open(page: Page, path: string, ready: string) {
  await page.goto(url + path);
  await page.locator(ready).first().waitFor();
}

test.serial('keyboard only: sign-up, verify, password reset, an invitation, a first team', async (t) => {
  t.timeout(180_000);
  const v = await openPage(browser, DESKTOP);
  const { page } = v;
  await open(page, '/sign-up', '#sign-up-form');
  await keyboardOnly(t, page, 'sign-up', async () => {
    await tabToName(t, page, 'Name');
    await page.keyboard.type('Kay Board');
    await tabToName(t, page, 'Email');
    await page.keyboard.type('kay@people.test');
    await tabToName(t, page, 'Password (8 characters or more)');
    await page.keyboard.type('a long keyboard password');
    await page.keyboard.press('Enter');
    await page.getByText('We sent a link').waitFor();
  });

  const { token } = await signUp(p.db, { email: 'kay2@people.test', password: 'a long keyboard password' });
  await open(page, `/verify#token=${encodeURIComponent(token!)}`, 'text=Your address is confirmed');
  await keyboardOnly(t, page, 'verify', async () => {
    await tabToName(t, page, 'Sign in');
    await page.keyboard.press('Enter');
    await page.locator('#sign-in-form').waitFor();
  });

  await open(page, '/reset-password', '#reset-form');
  await keyboardOnly(t, page, 'reset-password', async () => {
    await tabToName(t, page, 'Email');
    await page.keyboard.type('kay2@people.test');
    await page.keyboard.press('Enter');
    await page.getByText('a link to reset its password is on its way').waitFor();
  });
  const reset = await requestReset(p.db, 'kay2@people.test');
  await open(page, `/reset-password#token=${encodeURIComponent(reset.token)}`, '#new-password-form');
  await keyboardOnly(t, page, 'reset-password (new password)', async () => {
    await tabToName(t, page, 'New password');
    await page.keyboard.type('another long keyboard password');
    await page.keyboard.press('Enter');
    await page.getByText('Your password is changed').waitFor();
  });

  // An invitation's link, signed out: sign in to accept; signed in: accept (the team becomes the current one).
  const inviter = await p.db('users').where({ email: 'kb-owner@people.test' }).first('id');
  const invited = await createInvitation(p.db, owner.teamId, inviter.id, {
    email: 'kay2@people.test',
    role: 'member',
  });
  await open(page, `/dashboard/invitation#token=${encodeURIComponent(invited.token)}`, '#invitation-sign-in');
  await keyboardOnly(t, page, 'invitation (signed out)', async () => {
    await tabToName(t, page, 'Sign in to accept');
    await page.keyboard.press('Enter');
    await page.locator('#sign-in-form').waitFor();
  });
  await fillSignIn(page, 'kay2@people.test', 'another long keyboard password');
  await page.locator('#accept-invitation').waitFor();
  await keyboardOnly(t, page, 'invitation', async () => {
    await tabToName(t, page, 'Accept the invitation');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${url}/dashboard/settings/team`);
    await page.locator('.role', { hasText: 'member' }).waitFor();
  });

  // A person without a team is asked to make one.
  await makeUser(p.db, 'kay3@people.test', 'a long keyboard password');
  const fresh = await openPage(browser, DESKTOP);
  await signInThroughPage(fresh.page, url, 'kay3@people.test', 'a long keyboard password');
  await fresh.page.locator('#new-team-form').waitFor();
  await keyboardOnly(t, fresh.page, 'new team', async () => {
    await tabToName(t, fresh.page, 'Team name');
    await fresh.page.keyboard.type('Kay’s team');
    await fresh.page.keyboard.press('Enter');
    await fresh.page.getByText('Nothing sent in this range yet').waitFor();
  });
  await fresh.context.close();

  // Signed out: the session's /me answers 401.
  t.deepEqual(
    unexpected(v.errors).filter((e) => !/status of 401/.test(e)),
    [],
  );
  await v.context.close();
});
