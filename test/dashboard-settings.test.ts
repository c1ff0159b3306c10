// The team's settings in a real browser (Debian's Chromium) against the real api and mta: an admin renames the team
// (a blank name refused first), invites by mail and revokes an invitation in a dialog; the invitee opens the mailed
// link signed out, signs in and joins; the admin changes the invitee's role to viewer while the invitee has a
// member's form open: the api's 403 is shown with its message, the form keeps what was typed, and once reloaded the
// viewer sees no action anywhere in the settings. Every page is checked by axe-core and photographed at 1280 and
// 390 pixels.
import test, { type ExecutionContext } from 'ava';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, openPage, DESKTOP } from './helpers/browser.ts';
import { buildDashboard, fillSignIn, look } from './helpers/dashboard.ts';
import { makeUser, PEOPLE, startAccountsWorld, type AccountsWorld } from './helpers/accounts.ts';
import { adminWithTeam, PASSWORD, signInOnPage, unexpected } from './helpers/dashboard-settings.ts';

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

const alertText = async (page: Page) => ((await page.getByRole('alert').first().textContent()) ?? '').trim();

test.serial('team, invitations by mail, joining by the link, roles, a forced refusal, removal', async (t) => {
  t.timeout(300_000);
  const url = world.w.p.url;
  const owner = `owner@${PEOPLE}`;
  await adminWithTeam(world.w.p.db, url, owner, 'Settings <i>team</i>');
  const v = await openPage(browser, DESKTOP);
  const { page } = v;
  await signInOnPage(page, url, owner);
  await page.waitForURL(`${url}/dashboard/settings/team`);
  t.is(await page.locator('#team-name').textContent(), 'Settings <i>team</i>', 'the name as text');
  await page.locator('#sending-facts').waitFor();
  t.regex((await page.locator('#sending-facts').textContent()) ?? '', new RegExp(`Identities${owner}`), 'GET /team');
  await look(t, page, 'settings-team');
  await rename(t, page);
  await invitations(t, page, url);

  const newcomer = `newcomer@${PEOPLE}`;
  const joined = await join(t, url, newcomer);
  await forcedRefusal(t, page, joined.page, url, newcomer);
  await viewerSeesNoAction(t, joined.page, url);

  await page.goto(`${url}/dashboard/settings/members`);
  await page.getByRole('button', { name: `Remove ${newcomer}` }).click();
  const dialog = page.getByRole('dialog', { name: `Remove ${newcomer}?` });
  await dialog.waitFor();
  await look(t, page, 'settings-member-remove');
  await dialog.getByRole('button', { name: 'Remove' }).click();
  await page.getByRole('dialog').waitFor({ state: 'detached' });
  await page.getByRole('table').waitFor();
  t.is(await page.getByText(newcomer).count(), 0, 'the member is gone');
  // The last admin cannot be removed: the api's message is shown.
  await page.getByRole('button', { name: `Remove ${owner}` }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
  await page.getByRole('dialog').getByRole('alert').waitFor();
  t.regex((await page.getByRole('dialog').getByRole('alert').textContent()) ?? '', /admin/);
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'detached' });
  // Nor can it leave.
  await page.goto(`${url}/dashboard/settings/team`);
  await page.getByRole('button', { name: 'Leave the team' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Leave' }).click();
  await page.getByRole('alert').waitFor();
  t.regex(await alertText(page), /admin/);
  t.is(await page.locator('.team option:checked').textContent(), 'Acme <b>Ops</b>', 'still in the team');
  t.deepEqual(unexpected(v), []);
  t.deepEqual(unexpected(joined), []);
  await joined.context.close();
  await v.context.close();
});

async function rename(t: ExecutionContext, page: Page) {
  const name = page.locator('#rename-team-form input[name=name]');
  await name.fill('   ');
  await page.locator('#rename-team-form button[type=submit]').click();
  await page.getByRole('alert').waitFor();
  t.regex(await alertText(page), /blank/, "the api's message");
  await look(t, page, 'settings-team-error');
  await name.fill('Acme <b>Ops</b>');
  await page.locator('#rename-team-form button[type=submit]').click();
  await page.locator('#team-name', { hasText: 'Acme <b>Ops</b>' }).waitFor();
  t.is(await page.locator('.team option:checked').textContent(), 'Acme <b>Ops</b>', 'the switcher follows');
}

async function invitations(t: ExecutionContext, page: Page, url: string) {
  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Invitations' }).click();
  await page.waitForURL(`${url}/dashboard/settings/invitations`);
  await page.getByText('No pending invitations').waitFor();
  await look(t, page, 'settings-invitations-empty');
  const form = page.locator('#invite-form');
  await form.locator('input[name=email]').fill(`someone-else@${PEOPLE}`);
  await form.locator('select[name=role]').selectOption('viewer');
  await form.locator('button[type=submit]').click();
  await page.getByRole('cell', { name: `someone-else@${PEOPLE}`, exact: true }).waitFor();
  await form.locator('input[name=email]').fill(`newcomer@${PEOPLE}`);
  await form.locator('button[type=submit]').click();
  await page.getByRole('cell', { name: `newcomer@${PEOPLE}`, exact: true }).waitFor();
  t.is(await page.getByRole('status').textContent(), `Invitation mailed to newcomer@${PEOPLE}.`);
  await look(t, page, 'settings-invitations');

  await page.getByRole('button', { name: `Revoke the invitation of someone-else@${PEOPLE}` }).click();
  const dialog = page.getByRole('dialog', { name: `Revoke the invitation of someone-else@${PEOPLE}?` });
  await dialog.waitFor();
  await look(t, page, 'settings-invitation-revoke');
  await dialog.getByRole('button', { name: 'Revoke' }).click();
  await page.getByRole('cell', { name: `someone-else@${PEOPLE}`, exact: true }).waitFor({ state: 'detached' });
  await page.getByRole('cell', { name: `newcomer@${PEOPLE}`, exact: true }).waitFor();
  t.is(await page.getByRole('row').count(), 2, 'the header and the one pending invitation');
}

/** The invitee opens the mailed link signed out, signs in from it, and joins: the team's page, as a member. */
async function join(t: ExecutionContext, url: string, email: string) {
  const mail = await world.mailTo(email);
  const base = world.w.p.config.PUBLIC_BASE_URL;
  const link = new RegExp(`${base}/dashboard/invitation#token=\\S+`).exec(mail.text)?.[0];
  t.truthy(link, `the mail links to the dashboard's invitation page: ${mail.text}`);
  await makeUser(world.w.p.db, email, PASSWORD, 'New <i>comer</i>');
  const visit = await openPage(browser, DESKTOP, url + link!.slice(base.length));
  const { page } = visit;
  await page.getByRole('link', { name: 'Sign in to accept' }).waitFor();
  await look(t, page, 'invitation-signed-out');
  await page.getByRole('link', { name: 'Sign in to accept' }).click();
  await fillSignIn(page, email, PASSWORD);
  await page.waitForURL(`${url}/dashboard/invitation`);
  t.false(page.url().includes('token'), 'the token never went into a URL a server sees');
  await page.locator('#accept-invitation').waitFor();
  await look(t, page, 'invitation-accept');
  await page.locator('#accept-invitation').click();
  await page.waitForURL(`${url}/dashboard/settings/team`);
  await page.locator('#team-name', { hasText: 'Acme <b>Ops</b>' }).waitFor();
  t.is(await page.locator('.role').textContent(), 'member');
  // The link works once: opened again, the api's refusal is shown.
  await page.goto(url + link!.slice(base.length));
  await page.locator('#accept-invitation').click();
  await page.getByRole('alert').waitFor();
  t.regex(await alertText(page), /\S/);
  await look(t, page, 'invitation-refused');
  return visit;
}

/**
 * The member has the add-suppression form open (a member's action) when the admin makes them a viewer on the
 * members page: submitting shows the api's 403 with its message, and the address typed is still there.
 */
async function forcedRefusal(t: ExecutionContext, admin: Page, member: Page, url: string, email: string) {
  await member.goto(`${url}/dashboard/suppressions`);
  const field = member.locator('#add-suppression-form input[name=email]');
  await field.fill(`typed-before@${PEOPLE}`);

  await admin.goto(`${url}/dashboard/settings/members`);
  await admin.getByLabel(`Role of ${email}`, { exact: true }).waitFor();
  await look(t, admin, 'settings-members');
  await admin.getByLabel(`Role of ${email}`, { exact: true }).selectOption('viewer');
  await admin.getByRole('button', { name: `Save the role of ${email}` }).click();
  // Saved: the list reloaded from the api shows the new role (its Save button disabled again).
  await admin.locator(`button[aria-label="Save the role of ${email}"]:disabled`).waitFor();
  t.is(await admin.getByLabel(`Role of ${email}`, { exact: true }).inputValue(), 'viewer');

  await member.locator('#add-suppression-form button[type=submit]').click();
  await member.getByRole('alert').waitFor();
  t.is(await alertText(member), 'This needs the member role in the team; yours is viewer. (invalid_permission)');
  t.is(await field.inputValue(), `typed-before@${PEOPLE}`, 'nothing typed is lost');
  await look(t, member, 'forced-refusal');
}

/** The viewer, once the page reloads: no action offered in any settings page. */
async function viewerSeesNoAction(t: ExecutionContext, page: Page, url: string) {
  await page.goto(`${url}/dashboard/settings/team`);
  await page.locator('#team-name').waitFor();
  t.is(await page.locator('.role').textContent(), 'viewer');
  t.is(await page.locator('#rename-team-form').count(), 0, 'no rename form');
  await look(t, page, 'settings-team-viewer');
  await page.goto(`${url}/dashboard/settings/members`);
  await page.getByRole('table').waitFor();
  t.is(await page.getByRole('button', { name: /^Remove/ }).count(), 0, 'no remove button');
  t.is(await page.locator('select[aria-label^="Role of"]').count(), 0, 'no role change');
  await look(t, page, 'settings-members-viewer');
  for (const [path, form] of [
    ['invitations', '#invite-form'],
    ['export', '#request-export'],
    ['deletion', '#delete-team-form'],
  ]) {
    await page.goto(`${url}/dashboard/settings/${path}`);
    await page.locator('.admins-only').waitFor();
    t.regex((await page.locator('.admins-only').textContent()) ?? '', /Your role is viewer/);
    t.is(await page.locator(form).count(), 0, `no ${form} for a viewer`);
  }
  await look(t, page, 'settings-deletion-viewer');
}
