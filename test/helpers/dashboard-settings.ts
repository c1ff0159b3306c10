// What the settings pages' browser tests share: a person with a team (made through the api as the dashboard makes
// it), signing in on the page, and a look at a page (axe-core, no overflow, screenshots at 1280 and 390 pixels).
import type { ExecutionContext } from 'ava';
import type { Page } from 'playwright-core';
import { lookAt } from './dashboard.ts';
import { makeUser, signIn, type CookieClient } from './accounts.ts';
import type { Knex } from 'knex';
import type { Visit } from './browser.ts';

export const PASSWORD = 'a long settings password';

/** A verified account with a team it is the admin of (its current team), and its signed-in cookie client. */
export async function adminWithTeam(
  db: Knex,
  url: string,
  email: string,
  team: string,
): Promise<{ c: CookieClient; teamId: string }> {
  await makeUser(db, email, PASSWORD, 'Ada <b>Admin</b>');
  const c = await signIn(url, email, PASSWORD);
  const made = await c.request('POST', '/teams', { body: { name: team } });
  if (made.status !== 201) throw new Error(`team: ${made.status} ${made.text}`);
  await c.request('POST', `/teams/${made.body.id}/switch`, { body: {} });
  return { c, teamId: made.body.id };
}

/** Signs in on the page; waits for the signed-in frame (or what `waitFor` names). */
export async function signInOnPage(page: Page, url: string, email: string, next = '/dashboard/settings') {
  await page.goto(`${url}/sign-in?next=${encodeURIComponent(next)}`);
  await page.locator('#sign-in-form input[name=email]').fill(email);
  await page.locator('#sign-in-form input[name=password]').fill(PASSWORD);
  await page.locator('#sign-in-form button[type=submit]').click();
}

/** axe-core finds nothing serious or critical; nothing wider than the window; the screenshots are written. */
export async function look(t: ExecutionContext, page: Page, shots: string, name: string) {
  const { violations, overflow } = await lookAt(page, shots, name);
  t.is(overflow, 0, `${name} is wider than the window`);
  t.deepEqual(
    violations.map((v) => `${v.id}: ${v.help} ${JSON.stringify(v.nodes.map((n) => n.target))}`),
    [],
    `axe on ${name}`,
  );
}

/** Console errors but the expected refusals (a signed-out /me, refused forms, a forbidden action). */
export const unexpected = (v: Visit) => v.errors.filter((e) => !/status of (401|403|404|422)/.test(e));
