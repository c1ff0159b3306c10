// The settings pages without a mouse, and a session lost mid-edit, in a real browser (Debian's Chromium) against the
// real api. Keyboard only: sign in, walk every settings section with Tab and Enter (each focused element shows a
// visible focus ring), invite someone, open the revoke dialog (Tab stays inside it, Escape closes it and the focus
// returns to its button), revoke. Mid-edit: the session is revoked while the invite form is filled in; sending it
// opens the sign-in-again dialog over the page, the form keeps what was typed, and once signed in again it is sent.
import test from 'ava';
import type { Browser } from 'playwright-core';
import { launchChromium, openPage, DESKTOP } from './helpers/browser.ts';
import { buildDashboard, focused, look, tabTo } from './helpers/dashboard.ts';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { adminWithTeam, PASSWORD, signInOnPage, unexpected } from './helpers/dashboard-settings.ts';

let p: Platform;
let browser: Browser;
test.before(async () => {
  await buildDashboard();
  p = await startPlatform();
  browser = await launchChromium();
});
test.after.always(async () => {
  await browser?.close();
  await p?.close();
});

const SECTIONS = [
  ['Members', 'Members'],
  ['Invitations', 'Invitations'],
  ['Two-factor', 'Two-factor authentication'],
  ['Sessions', 'Sessions'],
  ['Password', 'Password'],
  ['Export', 'Export'],
  ['OAuth grants', 'OAuth grants'],
  ['Delete team', 'Delete the team'],
  ['Team', 'Team'],
] as const;

test.serial(
  'keyboard only: sign in, walk the settings, invite, a dialog that traps and returns the focus',
  async (t) => {
    t.timeout(180_000);
    const email = 'keys@people.test';
    await adminWithTeam(p.db, p.url, email, 'Keyboard team');
    const v = await openPage(browser, DESKTOP, `${p.url}/sign-in?next=%2Fdashboard%2Fsettings`);
    const { page } = v;
    await page.locator('#sign-in-form').waitFor();
    await tabTo(t, page, (f) => f.name === 'email', 'the email field');
    await page.keyboard.type(email);
    await tabTo(t, page, (f) => f.name === 'password', 'the password field');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${p.url}/dashboard/settings/team`);

    for (const [link, heading] of SECTIONS) {
      await tabTo(t, page, (f) => f.tag === 'a' && f.name === link, `the ${link} link`);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: heading, exact: true }).waitFor();
    }

    await tabTo(t, page, (f) => f.tag === 'a' && f.name === 'Invitations', 'the Invitations link');
    await page.keyboard.press('Enter');
    await page.getByText('No pending invitations').waitFor();
    await tabTo(t, page, (f) => f.name === 'email', 'the invite form');
    await page.keyboard.type('invited-by-keys@people.test');
    await tabTo(t, page, (f) => f.tag === 'select', 'the role');
    await page.keyboard.press('ArrowUp');
    t.is(await page.locator('#invite-form select').inputValue(), 'viewer');
    await tabTo(t, page, (f) => f.name === 'Send the invitation', 'the submit button');
    await look(t, page, 'settings-keyboard-focus');
    await page.keyboard.press('Enter');
    await page.getByRole('cell', { name: 'invited-by-keys@people.test', exact: true }).waitFor();
    t.is(
      await page
        .getByRole('row', { name: /invited-by-keys/ })
        .getByRole('cell')
        .nth(1)
        .textContent(),
      'viewer',
    );

    const revoke = 'Revoke the invitation of invited-by-keys@people.test';
    await tabTo(t, page, (f) => f.name === revoke, 'the revoke button');
    await page.keyboard.press('Enter');
    await page.getByRole('dialog').waitFor();
    t.true((await focused(page)).inDialog, 'the dialog takes the focus');
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press(i % 2 ? 'Shift+Tab' : 'Tab');
      const f = await focused(page);
      t.true(f.inDialog && f.ring, `the focus stays in the dialog (${f.tag} "${f.name}")`);
    }
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    t.is((await focused(page)).name, revoke, 'the focus is back on the button that opened the dialog');
    await page.keyboard.press('Enter');
    await page.getByRole('dialog').waitFor();
    await tabTo(t, page, (f) => f.inDialog && f.name === 'Revoke', "the dialog's Revoke");
    await page.keyboard.press('Enter');
    await page.getByText('No pending invitations').waitFor();
    t.deepEqual(unexpected(v), []);
    await v.context.close();
  },
);

test.serial(
  'a session revoked mid-edit: sign in again in a dialog, nothing typed is lost, then it is sent',
  async (t) => {
    t.timeout(180_000);
    const email = 'expired@people.test';
    const { c } = await adminWithTeam(p.db, p.url, email, 'Expiry team');
    const v = await openPage(browser, DESKTOP);
    const { page } = v;
    await signInOnPage(page, p.url, email, '/dashboard/settings/invitations');
    const form = page.locator('#invite-form');
    await form.waitFor();
    await form.locator('input[name=email]').fill('kept@people.test');
    await form.locator('select[name=role]').selectOption('admin');

    // Elsewhere, the person signs this browser out (the sessions page of another browser does just this).
    const sessions = await c.request('GET', '/auth/sessions');
    const browserSession = sessions.body.data.find((s: { user_agent: string }) => /Chrome/.test(s.user_agent ?? ''));
    t.is((await c.request('DELETE', `/auth/sessions/${browserSession.id}`)).status, 200);

    await form.locator('button[type=submit]').click();
    const dialog = page.getByRole('dialog', { name: 'Your session has ended' });
    await dialog.waitFor();
    t.is(await form.locator('input[name=email]').inputValue(), 'kept@people.test', 'the form keeps its content');
    t.is(await form.locator('select[name=role]').inputValue(), 'admin');
    t.is((await focused(page)).name, 'password', 'the dialog asks for the password');
    await look(t, page, 'session-expired');
    await dialog.locator('input[name=password]').fill('not the password');
    await dialog.locator('button[type=submit]').click();
    await dialog.getByRole('alert').waitFor();
    await dialog.locator('input[name=password]').fill(PASSWORD);
    await dialog.locator('button[type=submit]').click();
    await dialog.waitFor({ state: 'detached' });
    t.is((await focused(page)).name, 'Send the invitation', 'the focus is back on the form');
    t.is(await form.locator('input[name=email]').inputValue(), 'kept@people.test', 'still there');

    await form.locator('button[type=submit]').click();
    await page.getByRole('cell', { name: 'kept@people.test', exact: true }).waitFor();
    t.is(await page.getByRole('row', { name: /kept@/ }).getByRole('cell').nth(1).textContent(), 'admin');
    t.deepEqual(unexpected(v), []);
    await v.context.close();
  },
);
