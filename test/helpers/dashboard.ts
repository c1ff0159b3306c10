// The dashboard's build for the tests: `vite build` (as `npm run build` runs it) when dist/web is missing or older
// than a file of web/, so a test never serves a stale dashboard and needs no manual step.
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const WEB = path.join(root, 'web');
const BUILT = path.join(root, 'dist', 'web', 'index.html');

async function newest(dir: string): Promise<number> {
  let latest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? await newest(full) : (await stat(full)).mtimeMs);
  }
  return latest;
}

export async function buildDashboard(): Promise<void> {
  const built = await stat(BUILT).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  if (built > (await newest(WEB))) return;
  // A child process with NODE_ENV=production, as `npm run build` runs it (ava sets NODE_ENV=test, which would make
  // a development build of React).
  const vite = path.join(root, 'node_modules', '.bin', 'vite');
  await promisify(execFile)(vite, ['build', '--config', path.join(WEB, 'vite.config.ts'), '--logLevel', 'warn'], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'production' },
  });
}

const axeSource = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * axe-core run in the page (its source injected as a script, as a browser extension does; the page's CSP does not
 * govern what the test harness evaluates): the serious and critical violations.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(await axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (d: Document) => Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run(document)).violations;
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

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
    await page.setViewportSize({ width, height: width === 1280 ? 900 : 844 });
    // One frame for the layout (and a sandboxed frame's content) to settle at the new width.
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    await page.screenshot({ path: path.join(dir, `${name}-${width}.png`), fullPage: true });
    overflow = Math.max(overflow, await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth));
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  return { violations, overflow };
}
