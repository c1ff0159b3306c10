// What the settings pages' browser tests share: a person with a team (made through the api as the dashboard makes
// it), signing in on the page (the look at a page: test/helpers/dashboard.ts).
import type { Page } from 'playwright-core';
import { signInThroughPage } from './dashboard.ts';
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
  await signInThroughPage(page, url, email, PASSWORD, next);
}

/** Console errors but the expected refusals (a signed-out /me, refused forms, a forbidden action). */
export const unexpected = (v: Visit) => v.errors.filter((e) => !/status of (401|403|404|422)/.test(e));
