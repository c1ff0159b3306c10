// The world of the dashboard's template tests: the real api (no mta: these pages send nothing), a team with a member
// who owns it (admin), a viewer of it, headless Chromium, and the screenshot folder. People are made by the sign-up
// code itself (makeUser); they sign in through the dashboard's own sign-in page.
import type { ExecutionContext } from 'ava';
import type { Browser, Page } from 'playwright-core';
import { newId } from '../../shared/ids.ts';
import path from 'node:path';
import { DESKTOP, launchChromium, PHONE, screenshotDir, type Visit } from './browser.ts';
import { assertLook, buildDashboard, lookAt, signInThroughPage } from './dashboard.ts';
import { makeUser, signIn as cookieSignIn, type CookieClient } from './accounts.ts';
import { startPlatform, type Platform } from './platform.ts';
import { freePort } from './ports.ts';

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
  // At a port of its own, so that PUBLIC_BASE_URL names it: the preview shows the platform's own images (a social
  // link's default icon) from there.
  const p = await startPlatform({ PORT: String(await freePort()) });
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
  await signInThroughPage(page, url, email, PASSWORD);
  await page.locator('#who').waitFor();
}

/** The template preview's frame, or a sent email's (its own page too: test/dashboard-account.test.ts). */
const FRAMES = 'iframe.email-frame, iframe.preview';

/**
 * axe-core finds nothing serious or critical; nothing wider than the window; the screenshots are written. The phone's
 * is taken again with a window as tall as the page: Chromium does not paint a cross-origin frame (the preview) that is
 * out of the window, so lookAt's full-page capture shows it blank below the first screenful, while a person
 * scrolling to it sees the email (test/dashboard-templates.test.ts checks the frame's text at 390 pixels).
 */
export async function look(t: ExecutionContext, page: Page, shots: string, name: string) {
  const { violations, overflow } = await lookAt(page, shots, name);
  if ((await page.locator(FRAMES).count()) > 0) {
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.setViewportSize({ width: PHONE.width, height: Math.max(PHONE.height, height) });
    const tall = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.setViewportSize({ width: PHONE.width, height: Math.max(PHONE.height, tall) });
    await page
      .locator(FRAMES)
      .first()
      .evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    // A moment for the frame's own process to paint (nothing is asserted on it).
    await page.waitForTimeout(300);
    await page.screenshot({ path: path.join(shots, `${name}-390.png`) });
    await page.setViewportSize(DESKTOP);
  }
  assertLook(t, name, { violations, overflow });
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
