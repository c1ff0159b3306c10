// The dashboard suite of `npm run bench` (BENCH_ONLY=dashboard; see bench/README.md): the built dashboard served
// by the real api process (NODE_ENV=production, its own database with 100,000 contacts written in SQL), driven by
// Debian's Chromium: the initial JavaScript's gzipped size, each page's time to interactive from Chromium's
// performance timings, and paging the contacts table (time from a click to the next page's rows on screen).
import { readFile, readdir } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { createDb } from '../shared/db/knex.ts';
import { newId } from '../shared/ids.ts';
import { signUp, verifyEmail } from '../shared/accounts/signup.ts';
import { createTeamForUser } from '../shared/teams/members.ts';
import { createTestDatabase } from '../test/helpers/db.ts';
import { buildDashboard } from '../test/helpers/dashboard.ts';
import { launchChromium } from '../test/helpers/browser.ts';
import { seedAudience } from './segments-seed.ts';
import { repoRoot, startServer } from './servers.ts';
import { fixed, renderTable } from './table.ts';

export interface DashboardBenchOptions {
  contacts: number;
  runs: number;
  pages: number;
  redisUrl: string;
  onCleanup(step: () => Promise<unknown>): void;
}

/** The budgets: initial JavaScript gzipped, and the largest page interactive on loopback. */
export const INITIAL_JS_BUDGET_KB = 300;
export const INTERACTIVE_BUDGET_MS = 1000;
const PASSWORD = 'a dashboard bench password';
const WEB = path.join(repoRoot, 'dist', 'web');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const max = (xs: number[]) => Math.max(...xs);

/** The scripts index.html loads at once (its module and the chunks it preloads), gzipped as the api serves them. */
async function initialJs(): Promise<{ initialKb: number; allKb: number; files: number }> {
  const html = await readFile(path.join(WEB, 'index.html'), 'utf8');
  const refs = [...html.matchAll(/(?:src|href)="\/assets\/([^"]+\.js)"/g)].map((m) => m[1]);
  const gz = async (f: string) => gzipSync(await readFile(path.join(WEB, 'assets', f))).length / 1024;
  let initialKb = 0;
  for (const f of new Set(refs)) initialKb += await gz(f);
  const all = (await readdir(path.join(WEB, 'assets'))).filter((f) => f.endsWith('.js'));
  let allKb = 0;
  for (const f of all) allKb += await gz(f);
  return { initialKb, allKb, files: all.length };
}

async function setup(o: DashboardBenchOptions) {
  const database = await createTestDatabase();
  o.onCleanup(() => database.drop());
  const blobDir = await mkdtemp(path.join(tmpdir(), 'pw-bench-dashboard-'));
  o.onCleanup(() => rm(blobDir, { recursive: true, force: true }));
  const db = createDb({ DATABASE_URL: database.url }, { min: 0, max: 2 });
  try {
    const email = `bench-${randomBytes(3).toString('hex')}@people.test`;
    const { token } = await signUp(db, { email, password: PASSWORD });
    const user = await verifyEmail(db, token);
    const { team } = await createTeamForUser(db, user.id, { name: 'Bench' }, 'postwerk.localhost');
    const started = performance.now();
    await seedAudience(db, team.id, o.contacts);
    console.error(
      `bench: dashboard: ${o.contacts} contacts seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const segment = await db('segments')
      .insert({
        id: newId(),
        team_id: team.id,
        name: 'Pro',
        filter: JSON.stringify({ field: 'property', key: 'plan', operator: 'equals', value: 'pro' }),
      })
      .returning('id');
    const contact = await db('contacts').where({ team_id: team.id }).orderBy('id', 'desc').first('id');
    return {
      databaseUrl: database.url,
      blobDir,
      email,
      segmentId: segment[0].id as string,
      contactId: contact.id as string,
    };
  } finally {
    await db.destroy();
  }
}

/**
 * A fresh navigation to `url` (the browser cache kept, as a returning person has it): Chromium's navigation timing
 * (responseEnd, domInteractive, domContentLoaded) and the moment the page's own content (`ready`) is on screen
 * with its data, which is when a person can use it.
 */
async function visit(page: Page, url: string, ready: string) {
  await page.goto('about:blank');
  await page.goto(url, { waitUntil: 'commit' });
  await page.waitForFunction(
    (sel) => {
      const w = window as unknown as { readyAt?: number };
      if (document.querySelector(sel)) w.readyAt ??= performance.now();
      return w.readyAt !== undefined;
    },
    ready,
    { polling: 'raf', timeout: 30_000 },
  );
  return page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
    return {
      interactive: nav.domInteractive,
      dcl: nav.domContentLoadedEventEnd,
      ready: (window as unknown as { readyAt: number }).readyAt,
    };
  });
}

async function pageTimes(page: Page, base: string, s: { segmentId: string; contactId: string }, runs: number) {
  const pages: [string, string, string][] = [
    ['emails', '/dashboard/emails', '.empty, table'],
    ['contacts (100k)', '/dashboard/contacts', '#contacts-table tbody tr'],
    ['contacts of a segment', `/dashboard/contacts?segment=${s.segmentId}`, '#contacts-table tbody tr'],
    ['a contact', `/dashboard/contacts/${s.contactId}`, '#topics-h ~ ul li'],
    ['segment editor + count', `/dashboard/segments/${s.segmentId}`, '#live-count:not(:empty)'],
    ['imports', '/dashboard/contacts/imports', '#import-form'],
    ['topics', '/dashboard/topics', '#topics-list'],
  ];
  const rows: (string | number)[][] = [];
  let worst = 0;
  for (const [name, p, ready] of pages) {
    const t: { interactive: number; dcl: number; ready: number }[] = [];
    for (let i = 0; i < runs; i++) t.push(await visit(page, base + p, ready));
    const readyMs = median(t.map((x) => x.ready));
    worst = Math.max(worst, readyMs);
    rows.push([
      name,
      fixed(median(t.map((x) => x.interactive)), 0),
      fixed(median(t.map((x) => x.dcl)), 0),
      fixed(readyMs, 0),
      fixed(max(t.map((x) => x.ready)), 0),
    ]);
  }
  return { rows, worst };
}

/** Next page `pages` times, then Previous as many: the time from the click to the new first row on screen. */
async function paging(page: Page, base: string, pages: number) {
  await page.goto(`${base}/dashboard/contacts`);
  await page.locator('#contacts-table tbody tr').first().waitFor();
  const turn = async (button: string) => {
    const first = await page.locator('#contacts-table tbody td.address').first().textContent();
    const started = Date.now();
    await page.getByRole('button', { name: button }).click();
    await page.waitForFunction(
      (prev) => {
        const cell = document.querySelector('#contacts-table tbody td.address');
        return cell !== null && cell.textContent !== prev;
      },
      first,
      { polling: 'raf' },
    );
    return Date.now() - started;
  };
  const next: number[] = [];
  const previous: number[] = [];
  for (let i = 0; i < pages; i++) next.push(await turn('Next page'));
  for (let i = 0; i < pages; i++) previous.push(await turn('Previous page'));
  const rowsOnPage = await page.locator('#contacts-table tbody tr').count();
  // A search as a person makes one on the page: typed, Search pressed, until the one match is the first row.
  const search: number[] = [];
  for (let i = 0; i < 5; i++) {
    const q = `user${12345 + i * 1111}@`;
    await page.getByLabel('Search contacts').fill(q);
    const started = Date.now();
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForFunction(
      (text) => document.querySelector('#contacts-table tbody td.address')?.textContent?.startsWith(text) ?? false,
      q,
      { polling: 'raf' },
    );
    search.push(Date.now() - started);
  }
  return { next, previous, search, rowsOnPage };
}

export async function runDashboardBench(o: DashboardBenchOptions): Promise<boolean> {
  await buildDashboard();
  const js = await initialJs();
  const s = await setup(o);
  const api = await startServer('api', 'api/main.ts', {
    NODE_ENV: 'production',
    LOG_LEVEL: 'silent',
    HOST: '127.0.0.1',
    DATABASE_URL: s.databaseUrl,
    REDIS_URL: o.redisUrl,
    REDIS_PREFIX: `pwbench-${randomBytes(5).toString('hex')}`,
    BLOB_DIR: s.blobDir,
    SECRETS_KEY: randomBytes(32).toString('base64'),
    RATE_LIMIT_RPS: '100000',
  });
  o.onCleanup(() => api.stop());
  const browser = await launchChromium();
  o.onCleanup(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${api.url}/sign-in`);
  await page.locator('#sign-in-form input[name=email]').fill(s.email);
  await page.locator('#sign-in-form input[name=password]').fill(PASSWORD);
  await page.locator('#sign-in-form button[type=submit]').click();
  await page.locator('#who').waitFor({ timeout: 60_000 });
  const times = await pageTimes(page, api.url, s, o.runs);
  const turns = await paging(page, api.url, o.pages);
  await context.close();

  console.log('');
  console.log(
    `dashboard: initial JavaScript ${fixed(js.initialKb, 1)} KB gzipped (all ${js.files} chunks: ${fixed(js.allKb, 1)} KB)`,
  );
  console.log(
    renderTable(
      ['page', 'domInteractive ms', 'DOMContentLoaded ms', 'ready ms (median)', 'ready ms (max)'],
      times.rows,
    ),
  );
  console.log(
    renderTable(
      ['contacts paging over ' + o.contacts.toLocaleString('en-US'), 'turns', 'median ms', 'max ms'],
      [
        ['next page', turns.next.length, median(turns.next), max(turns.next)],
        ['previous page', turns.previous.length, median(turns.previous), max(turns.previous)],
        ['search (few matches)', turns.search.length, median(turns.search), max(turns.search)],
      ],
    ),
  );
  console.log(`rows on the page after ${o.pages * 2} turns: ${turns.rowsOnPage}`);
  const jsOk = js.initialKb < INITIAL_JS_BUDGET_KB;
  const readyOk = times.worst < INTERACTIVE_BUDGET_MS;
  console.log(
    `${jsOk ? 'PASS' : 'FAIL'} initial JavaScript ${fixed(js.initialKb, 1)} KB gzipped < ${INITIAL_JS_BUDGET_KB} KB`,
  );
  console.log(
    `${readyOk ? 'PASS' : 'FAIL'} the slowest page ready in ${fixed(times.worst, 0)} ms (median) < ${INTERACTIVE_BUDGET_MS} ms`,
  );
  return jsOk && readyOk;
}
