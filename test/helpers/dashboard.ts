// The dashboard's build for the tests: `vite build` (as `npm run build` runs it) when dist/web is missing or was built
// from other inputs than web/'s as they are (web/build-inputs.js), so a test never serves a stale dashboard and needs
// no manual step; built once however many test files ask at the same time. And the look every dashboard test takes at
// a page: axe-core, the width at 1280 and 390 pixels, screenshots.
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ExecutionContext } from 'ava';
import type { Page, Route } from 'playwright-core';
import { readFile } from 'node:fs/promises';
import { screenshotDir } from './browser.ts';
import { seriousViolations, type AxeViolation } from './axe.ts';
import { root } from '../../shared/layout.ts';

const WEB = path.join(root, 'web');
const LOCK = path.join(root, 'dist', '.web-build.lock');

export interface BuildInputs {
  inputsDigest(root: string, env: NodeJS.ProcessEnv): Promise<string>;
  builtDigest(root: string): Promise<string | null>;
}
/** web/build-inputs.js as the build itself reads it (a script of web/, beside this file in no layout). */
export const buildInputs = () => import(pathToFileURL(path.join(WEB, 'build-inputs.js')).href) as Promise<BuildInputs>;
// The build the tests serve is production's (viteBuild below).
const BUILD_ENV = { NODE_ENV: 'production' };

/** Whether dist/web was built from web/ as it is now (web/build-inputs.js). */
const fresh = async () => {
  const { builtDigest, inputsDigest } = await buildInputs();
  return (await builtDigest(root)) === (await inputsDigest(root, BUILD_ENV));
};

/** Whether the process that holds the build lock (its pid in the lock directory) is gone: a killed run's lock. */
async function lockAbandoned(): Promise<boolean> {
  const pid = Number(await readFile(path.join(LOCK, 'pid'), 'utf8').catch(() => '0'));
  if (!pid) {
    // Taken this instant (its pid not written yet), or left by a process killed right after taking it.
    const since = await stat(LOCK).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    );
    return since > 10_000;
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

/**
 * One build at a time across the test files ava runs side by side: the first file to find the build stale takes
 * the lock (a directory: mkdir is atomic) and builds; the others wait for the lock to go and find the build fresh.
 * The build goes to a directory of its own, moved into place whole (web/build.js): no file serves a half-written
 * dashboard, not even while test/compiled.test.ts runs `npm run build` beside.
 */
export async function buildDashboard(): Promise<void> {
  await mkdir(path.dirname(LOCK), { recursive: true });
  while (!(await fresh())) {
    try {
      await mkdir(LOCK, { recursive: false });
    } catch {
      if (await lockAbandoned()) await rm(LOCK, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    try {
      await writeFile(path.join(LOCK, 'pid'), String(process.pid));
      if (!(await fresh())) await viteBuild();
    } finally {
      await rm(LOCK, { recursive: true, force: true });
    }
  }
}

async function viteBuild(): Promise<void> {
  // web/build.js, as `npm run build` runs it: built aside and moved into place whole. A child process with
  // NODE_ENV=production (ava sets NODE_ENV=test, which would make a development build of React).
  await promisify(execFile)(process.execPath, [path.join(WEB, 'build.js')], {
    cwd: root,
    env: { ...process.env, ...BUILD_ENV },
  });
}

/**
 * The page from its top (one left scrolled draws its sticky panel that far down in a full-page shot, over a blank),
 * then two animation frames: the layout (and a sandboxed frame's content) settled at a new window size.
 */
const settle = (page: Page) =>
  page.evaluate(
    () => (window.scrollTo(0, 0), new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))),
  );

/**
 * A page as a person sees it: axe-core's serious and critical violations (none expected), and screenshots at
 * 1280 and 390 pixels wide in test/screenshots/dashboard/<name>-<width>.png, and how far the page is wider than
 * the viewport at either width (wide tables scroll in their own box). The viewport is put back to 1280.
 */
export async function lookAt(
  page: Page,
  dir: string,
  name: string,
): Promise<{ violations: AxeViolation[]; overflow: number }> {
  const violations = await seriousViolations(page);
  let overflow = 0;
  for (const width of [1280, 390]) {
    const height = width === 1280 ? 900 : 844;
    await page.setViewportSize({ width, height });
    await settle(page);
    overflow = Math.max(overflow, await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth));
    const file = path.join(dir, `${name}-${width}.png`);
    // Chromium paints a sandboxed frame (a process of its own) only within the viewport: a full-page screenshot shows
    // one below the fold empty, though a person who scrolls to it sees it drawn. Such a page is shot in a window as
    // tall as the page.
    const pageHeight = await page.evaluate((h) => {
      const below = [...document.querySelectorAll('iframe')].some((f) => f.getBoundingClientRect().bottom > h);
      return below ? document.documentElement.scrollHeight : 0;
    }, height);
    if (pageHeight === 0) {
      await page.screenshot({ path: file, fullPage: true });
      continue;
    }
    await page.setViewportSize({ width, height: pageHeight });
    await settle(page);
    await page.screenshot({ path: file });
    await page.setViewportSize({ width, height });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  return { violations, overflow };
}

/** What every page passes: nothing wider than the window, no serious or critical axe-core violation. */
export function assertLook(
  t: ExecutionContext,
  name: string,
  seen: { violations: AxeViolation[]; overflow: number },
): void {
  t.is(seen.overflow, 0, `${name} is wider than the window`);
  t.deepEqual(
    seen.violations.map((v) => `${v.id}: ${v.help} ${JSON.stringify(v.nodes.map((n) => n.target))}`),
    [],
    `axe on ${name}`,
  );
}

let shots: Promise<string> | undefined;

/**
 * axe-core finds nothing serious or critical; nothing wider than the window; the screenshots are written to `dir`
 * (test/screenshots/dashboard/ unless given).
 */
export async function look(t: ExecutionContext, page: Page, name: string, dir?: string): Promise<void> {
  shots ??= screenshotDir('dashboard');
  assertLook(t, name, await lookAt(page, dir ?? (await shots), name));
}

/** Fills the sign-in form shown on the page and sends it. */
export async function fillSignIn(page: Page, email: string, password: string): Promise<void> {
  await page.locator('#sign-in-form input[name=email]').fill(email);
  await page.locator('#sign-in-form input[name=password]').fill(password);
  await page.locator('#sign-in-form button[type=submit]').click();
}

/** Opens the sign-in page (with `next` when given) and signs in; does not wait for where it leads. */
export async function signInThroughPage(page: Page, url: string, email: string, password: string, next?: string) {
  await page.goto(`${url}/sign-in${next === undefined ? '' : `?next=${encodeURIComponent(next)}`}`);
  await fillSignIn(page, email, password);
}

/** What has the focus: its tag, a name to tell it by, whether it is in an open dialog and shows a focus ring. */
export interface Focused {
  tag: string;
  name: string;
  /** A field's label (its aria-label, or its label's text without the field's own). */
  label: string;
  id: string;
  inDialog: boolean;
  ring: boolean;
}

/**
 * The focused element. Its ring: it matches `:focus-visible` (or holds the focus in a part of its own) and draws an
 * outline (or a box shadow); a control hidden inside a label drawn as a button (a file input) counts its label's
 * `:focus-within` ring.
 */
export const focused = (page: Page): Promise<Focused> =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement;
    // (No named function in here: the test's compiler would wrap it in a helper the page does not have.)
    const [own, label] = [el, el.closest('label')].map((e) => {
      if (!e) return false;
      const s = getComputedStyle(e);
      return (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== 'none';
    });
    const labelled = (el as HTMLInputElement).labels?.[0];
    return {
      tag: el.tagName.toLowerCase(),
      name: (el.getAttribute('aria-label') ?? el.textContent ?? '').trim() || (el.getAttribute('name') ?? ''),
      label: (
        el.getAttribute('aria-label') ??
        (labelled ? (labelled.querySelector('span') ?? labelled).textContent : '') ??
        ''
      ).trim(),
      id: el.id,
      inDialog: !!el.closest('dialog[open]'),
      ring:
        el !== document.body &&
        // (A date field's calendar button has the focus inside the field: the field is :focus-within.)
        el.matches(':focus-visible, :focus-within') &&
        (own || (label && el.closest('label')!.matches(':focus-within'))),
    };
  });

/** Presses Tab (Shift+Tab with `back`) until `want` holds for the focused element; every stop shows its ring. */
export async function tabTo(
  t: ExecutionContext,
  page: Page,
  want: (f: Focused) => boolean,
  what: string,
  back = false,
): Promise<Focused> {
  for (let i = 0; i < 150; i++) {
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
    const f = await focused(page);
    if (f.tag !== 'body') t.true(f.ring, `a visible focus ring on ${f.tag} "${f.name}"`);
    if (want(f)) return f;
  }
  throw new Error(`Tab never reached ${what}`);
}

/** tabTo the element named `name` (its aria-label, text or name attribute, or a field's label), or matching it. */
export const tabToName = (t: ExecutionContext, page: Page, name: string | RegExp, back = false) =>
  tabTo(
    t,
    page,
    (f) => [f.name, f.label].some((n) => (typeof name === 'string' ? n === name : name.test(n))),
    String(name),
    back,
  );

/**
 * Whether the element focused inside a frame (a message's own link, in its sandboxed frame) shows a ring: the
 * frame's content is the message's, so its ring is the browser's own or the message's.
 */
async function ringInFrame(page: Page): Promise<boolean> {
  for (const frame of page.frames().slice(1)) {
    const ring = await frame
      .evaluate(() => {
        const el = document.activeElement as HTMLElement | null;
        if (!document.hasFocus() || !el || el === document.body) return false;
        const s = getComputedStyle(el);
        return el.matches(':focus-visible') && s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0;
      })
      .catch(() => false);
    if (ring) return true;
  }
  return false;
}

/**
 * Tab from the top of the page to its end: every element a person can reach with the keyboard (a link, a button, a
 * field, a summary, anything with a tabindex: shown, enabled, not inert; one radio of a group) is reached, and each
 * stop shows a visible focus ring. Answers the number of stops.
 */
export async function walkTabs(t: ExecutionContext, page: Page, name: string): Promise<number> {
  const expected = await page.evaluate(() => {
    const selector =
      'a[href], button, input:not([type=hidden]), select, textarea, summary, iframe, [tabindex], [contenteditable=true]';
    const w = window as unknown as { kbTargets: HTMLElement[]; kbSeen: Set<number> };
    w.kbTargets = [...document.querySelectorAll<HTMLElement>(selector)].filter(
      (el) =>
        el.tabIndex >= 0 &&
        !(el as HTMLButtonElement).disabled &&
        !el.closest('[inert], dialog:not([open]), fieldset:disabled') &&
        (el.checkVisibility({ visibilityProperty: true }) ||
          !!el.closest('label')?.checkVisibility({ visibilityProperty: true })),
    );
    w.kbSeen = new Set();
    // The walk starts before the page's first element: focus (without a ring) a start point put at the top.
    const start = document.createElement('span');
    start.tabIndex = -1;
    start.id = 'kb-walk-start';
    document.body.prepend(start);
    start.focus();
    return w.kbTargets.map((el) => {
      const label = (el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 40);
      return `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''} "${label || el.getAttribute('name') || ''}"`;
    });
  });
  const noRing: string[] = [];
  let stops = 0;
  let first: string | null = null;
  let previous = '';
  for (; stops < 400; stops++) {
    await page.keyboard.press('Tab');
    const stop = await page.evaluate(() => {
      document.getElementById('kb-walk-start')?.remove();
      const w = window as unknown as { kbTargets: HTMLElement[]; kbSeen: Set<number> };
      const el = document.activeElement as HTMLElement;
      let index = w.kbTargets.indexOf(el);
      // A radio stands for its group.
      if (index === -1 && el instanceof HTMLInputElement && el.type === 'radio')
        index = w.kbTargets.findIndex((o) => o instanceof HTMLInputElement && o.type === 'radio' && o.name === el.name);
      if (index !== -1) w.kbSeen.add(index);
      return {
        body: el === document.body,
        index,
        key: index === -1 ? `${el.tagName}:${el.outerHTML.slice(0, 80)}` : String(index),
      };
    });
    if (stop.body) break;
    // Back at the first stop: the focus went round (a date field's parts are stops of the same element).
    if (stop.key === first && previous !== first) break;
    first ??= stop.key;
    previous = stop.key;
    const f = await focused(page);
    if (!(f.ring || (f.tag === 'iframe' && (await ringInFrame(page))))) noRing.push(`${f.tag} "${f.name}"`);
  }
  const seen = await page.evaluate(() => [...(window as unknown as { kbSeen: Set<number> }).kbSeen]);
  const missed = expected.filter((_, i) => !seen.includes(i));
  t.deepEqual(noRing, [], `${name}: every stop shows a visible focus ring`);
  t.deepEqual(missed, [], `${name}: Tab reaches every interactive element`);
  t.true(stops > 0 && stops < 400, `${name}: the walk ends (${stops} stops)`);
  t.log(`${name}: ${stops} Tab stops`);
  return stops;
}

/**
 * A page used with the keyboard only: walkTabs over it as it is, then `action` (the page's main action, done by
 * pressing keys: tabTo, Enter, Space, typing), during which no pointer event reaches the page.
 */
export async function keyboardOnly(
  t: ExecutionContext,
  page: Page,
  name: string,
  action: () => Promise<void>,
): Promise<void> {
  await walkTabs(t, page, name);
  await page.evaluate(() => {
    const w = window as unknown as { kbPointer?: number };
    if (w.kbPointer !== undefined) return;
    w.kbPointer = 0;
    for (const type of ['pointerdown', 'mousedown', 'touchstart'])
      window.addEventListener(type, () => (w.kbPointer = (w.kbPointer ?? 0) + 1), true);
  });
  const pointer = () => page.evaluate(() => (window as unknown as { kbPointer?: number }).kbPointer ?? 0);
  const before = await pointer();
  await action();
  t.is(await pointer(), before, `${name}: done with the keyboard alone`);
}

/**
 * Holds the answers of the api route `path` (GET, any query) until `check` has run: the page's loading state as a
 * slow network shows it. The request goes on once released; the route is removed.
 */
export async function whileLoading(page: Page, path: string, check: () => Promise<void>): Promise<void> {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const matches = (u: URL) => u.pathname === path;
  const handler = async (route: Route) => {
    if (route.request().method() !== 'GET') return route.fallback();
    await held;
    await route.fallback();
  };
  await page.route(matches, handler);
  try {
    await check();
  } finally {
    release();
    await page.unroute(matches, handler);
  }
}

/** Answers the page's "Are you sure?" (web/src/dialog.tsx's useConfirm, titled `title`) with `button`; waits it out. */
export async function answerConfirm(page: Page, title: string | RegExp, button: string): Promise<void> {
  const dialog = page.getByRole('dialog', { name: title });
  await dialog.getByRole('button', { name: button, exact: true }).click();
  await dialog.waitFor({ state: 'detached' });
}
