// What the dashboard's operations tests share: a person signed in (cookie client, the same cookies given to a
// browser context, in a timezone of the test's choosing), a team made through the api, axe and screenshots.
import type { ExecutionContext } from 'ava';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { setTimeout as delay } from 'node:timers/promises';
import { CookieClient, makeUser } from './accounts.ts';
import { DESKTOP } from './browser.ts';
import { look, tabToName } from './dashboard.ts';
import type { Platform } from './platform.ts';

export const PASSWORD = 'a long dashboard password';

export interface Person {
  client: CookieClient;
  teamId: string;
}

/** An account (made without a mail), signed in, with a team of its own (its admin) or `join`ed as `role`. */
export async function person(
  p: Platform,
  email: string,
  join?: { teamId: string; role: 'viewer' | 'member' | 'admin' },
): Promise<Person> {
  const user = await makeUser(p.db, email, PASSWORD);
  const client = new CookieClient(p.url);
  const login = await client.request('POST', '/auth/login', { body: { email, password: PASSWORD } });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${login.text}`);
  const team = join
    ? (await p
        .db('team_members')
        .insert({ id: crypto.randomUUID(), team_id: join.teamId, user_id: user.id, role: join.role }),
      join.teamId)
    : (await client.request('POST', '/teams', { body: { name: `Team of ${email}` } })).body.id;
  const switched = await client.request('POST', `/teams/${team}/switch`, { body: {} });
  if (switched.status !== 200) throw new Error(`switch: ${switched.status} ${switched.text}`);
  return { client, teamId: team };
}

/**
 * A browser context carrying the person's session cookies; console errors, requests and failed requests noted (a
 * request a page's policy blocks may still be reported as a request, failed as `csp`).
 */
export async function browse(
  browser: Browser,
  who: Person,
  timezoneId = 'UTC',
): Promise<{
  context: BrowserContext;
  page: Page;
  errors: string[];
  requests: string[];
  failed: { url: string; error: string }[];
}> {
  const context = await browser.newContext({ viewport: DESKTOP, timezoneId, deviceScaleFactor: 1 });
  await context.addCookies(
    [...who.client.jar].map(([name, value]) => ({ name, value, url: who.client.url, sameSite: 'Lax' as const })),
  );
  const page = await context.newPage();
  const errors: string[] = [];
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  const failed: { url: string; error: string }[] = [];
  page.on('requestfailed', (r) => failed.push({ url: r.url(), error: r.failure()?.errorText ?? '' }));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (err) => errors.push(String(err)));
  return { context, page, errors, requests, failed };
}

/** Console errors but the expected refusals (a 404 asked on purpose, a refused form). */
export const unexpected = (errors: string[]) => errors.filter((e) => !/status of (404|422)/.test(e));

/** axe-core finds nothing serious or critical; nothing wider than the window; the screenshots are written. */
export { look };

/**
 * Tabs to the file field named `name`, opens its chooser with Space and picks `file`. The listener goes on before
 * the focus moves, so Chromium has been asked to hand the chooser over by the time Space is pressed (one CI run
 * waited 60 s for a chooser that never came); should Chromium still drop the press, a person would press again:
 * once more, with the focus checked to be on the file field still.
 */
export async function chooseFileWithKeys(t: ExecutionContext, page: Page, name: string, file: string): Promise<void> {
  const chooser = page.waitForEvent('filechooser', { timeout: 60_000 });
  await tabToName(t, page, name);
  await page.keyboard.press('Space');
  const opened = await Promise.race([chooser, delay(10_000).then(() => null)]);
  if (opened === null) {
    t.is(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.type), 'file');
    await page.keyboard.press('Space');
  }
  await (opened ?? (await chooser)).setFiles(file);
}
