// The world of the dashboard's template tests: the real api (no mta: these pages send nothing), a team with a member
// who owns it (admin), a viewer of it, headless Chromium, and the screenshot folder. People are made by the sign-up
// code itself (makeUser); they sign in through the dashboard's own sign-in page.
import type { ExecutionContext } from 'ava';
import type { Browser, Page } from 'playwright-core';
import { newId } from '../../shared/ids.ts';
import { launchChromium, screenshotDir, type Visit } from './browser.ts';
import { buildDashboard, lookAt } from './dashboard.ts';
import { makeUser, signIn as cookieSignIn, type CookieClient } from './accounts.ts';
import { startPlatform, type Platform } from './platform.ts';

export const PASSWORD = 'a long dashboard password';

export interface TemplatesWorld {
  p: Platform;
  browser: Browser;
  shots: string;
  teamId: string;
  owner: { email: string; c: CookieClient };
  viewer: { email: string };
  close(): Promise<void>;
}

export async function startTemplatesWorld(): Promise<TemplatesWorld> {
  await buildDashboard();
  const p = await startPlatform();
  const tag = newId().slice(0, 8);
  const owner = `owner-${tag}@people.test`;
  const viewer = `viewer-${tag}@people.test`;
  await makeUser(p.db, owner, PASSWORD, 'Owner');
  const viewerUser = await makeUser(p.db, viewer, PASSWORD, 'Viewer');
  const c = await cookieSignIn(p.url, owner, PASSWORD);
  const team = await c.request('POST', '/teams', { body: { name: 'Templates team' } });
  if (team.status !== 201) throw new Error(`team answered ${team.status} ${team.text}`);
  const teamId: string = team.body.id;
  const switched = await c.request('POST', `/teams/${teamId}/switch`, { body: {} });
  if (switched.status !== 200) throw new Error(`switch answered ${switched.status} ${switched.text}`);
  await p.db('team_members').insert({ id: newId(), team_id: teamId, user_id: viewerUser.id, role: 'viewer' });
  const browser = await launchChromium();
  const shots = await screenshotDir('dashboard-templates');
  return {
    p,
    browser,
    shots,
    teamId,
    owner: { email: owner, c },
    viewer: { email: viewer },
    async close() {
      await browser.close();
      await p.close();
    },
  };
}

export async function signInPage(page: Page, url: string, email: string) {
  await page.goto(`${url}/sign-in`);
  await page.locator('#sign-in-form input[name=email]').fill(email);
  await page.locator('#sign-in-form input[name=password]').fill(PASSWORD);
  await page.locator('#sign-in-form button[type=submit]').click();
  await page.locator('#who').waitFor();
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

/**
 * Console errors but the expected refusals (a refused save or preview, a 404) and the images an email names on hosts
 * this machine cannot resolve (the preview loads an email's https images, as a mail client does).
 */
export const unexpected = (v: Visit) =>
  v.errors.filter((e) => !/status of (401|403|404|413|422)|net::ERR_NAME_NOT_RESOLVED/.test(e));

/** The text inside the preview frame's document (the frame has its own origin: read through Playwright's frame). */
export async function frameText(page: Page): Promise<string> {
  const frame = page.frameLocator('iframe.email-frame');
  return (await frame.locator('body').innerText({ timeout: 15_000 })).trim();
}
