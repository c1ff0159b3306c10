// A real browser for the tests of the api's pages: Debian's headless Chromium (.ci/run installs the `chromium`
// package; CHROMIUM_PATH names another) driven by playwright-core, which downloads no browser of its own.
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { root } from '../../shared/layout.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * How long a page's action or wait may take: 60 s, not Playwright's 30. These are not timings (npm run bench has
 * those): on a CI machine's two cores shared by four test files, their platforms and Chromium, a first page load
 * or a click's request can take a while, and a dashboard test once failed so in a loaded run.
 */
export const PAGE_TIMEOUT_MS = 60_000;

/**
 * The browser features Chromium runs without here: Playwright's own list (playwright-core's `disabledFeatures`,
 * read from its bundle: Chromium takes only the last `--disable-features`, so ours must repeat Playwright's) and the
 * omnibox's WebUI popups. Headless Chromium keeps a browser window with an address bar, whose suggestion popups
 * (`chrome://omnibox-popup.top-chrome/`, two pages in a renderer of their own) load at start and follow every
 * navigation: measured on `dashboard-keys-teams` (2026-12-04), Chromium's CPU 14.9-15.2 s with them, 9.8-10.1 s
 * without; the pages under test are not touched. Throws when playwright-core's bundle no longer holds the list where
 * this reads it, so an upgrade cannot quietly drop Playwright's features.
 */
function disabledFeatures(): string {
  const bundle = readFileSync(createRequire(import.meta.url).resolve('playwright-core/lib/coreBundle'), 'utf8');
  const list = /\bdisabledFeatures = \[([^\]]*)\]/.exec(bundle)?.[1];
  const playwrights = [...(list ?? '').matchAll(/^\s*"(\w+)",?$/gm)].map((m) => m[1]);
  if (!playwrights.includes('PaintHolding'))
    throw new Error("test/helpers/browser.ts: playwright-core's disabled features not found in its bundle");
  return [...playwrights, 'WebUIOmniboxPopup', 'WebUIOmniboxAimPopup'].join(',');
}

/**
 * Chromium, headless, whose every context takes PAGE_TIMEOUT_MS. --no-sandbox: the tests run as root in CI, where
 * Chromium's sandbox refuses to start; `args` adds to it.
 */
export async function launchChromium(args: string[] = []): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', `--disable-features=${disabledFeatures()}`, ...args],
  });
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(PAGE_TIMEOUT_MS);
    return context;
  };
  return browser;
}

export interface Visit {
  context: BrowserContext;
  page: Page;
  /** Every URL the page requested. */
  requests: string[];
  /** Console errors and uncaught exceptions, a CSP violation among them. */
  errors: string[];
}

export const DESKTOP = { width: 1280, height: 900 };
/** A phone's width (an iPhone 12-15's CSS pixels). */
export const PHONE = { width: 390, height: 844 };

/** A fresh context and page that note every request and every console error; `url` opened when given. */
export async function openPage(
  browser: Browser,
  viewport: { width: number; height: number },
  url?: string,
  mobile = viewport.width < 600,
): Promise<Visit> {
  const context = await browser.newContext({ viewport, isMobile: mobile, hasTouch: mobile, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (err) => errors.push(String(err)));
  if (url) await page.goto(url);
  return { context, page, requests, errors };
}

/** How far the page is wider than its viewport (0 when it only scrolls down). */
export const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

/**
 * test/screenshots/<name>/ (git-ignored), made if missing: where a browser test leaves its screenshots for a person to
 * look at.
 */
export async function screenshotDir(name: string): Promise<string> {
  const dir = path.join(root, 'test', 'screenshots', name);
  await mkdir(dir, { recursive: true });
  return dir;
}
