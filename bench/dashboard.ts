// The dashboard suite of `npm run bench` (BENCH_ONLY=dashboard; see bench/README.md): the built dashboard served
// by the real api process (NODE_ENV=production, its own database with 100,000 contacts written in SQL), driven by
// Debian's Chromium: the initial JavaScript's gzipped size, each page's time to interactive from Chromium's
// performance timings (the audience pages, and the likeliest largest ones: the template editor, the broadcast composer,
// a broadcast's report, the overview's charts and a domain's records), and paging the contacts table (time from a
// click to the next page's rows on screen).
import { readFile, readdir } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import type { Page } from 'playwright-core';
import { createDb } from '../shared/db/knex.ts';
import { newId } from '../shared/ids.ts';
import { signUp, verifyEmail } from '../shared/accounts/signup.ts';
import { createTeamForUser } from '../shared/teams/members.ts';
import { liftSandbox } from '../shared/teams/teams.ts';
import { createKey } from '../shared/api-keys/keys.ts';
import { addCounts, type CountRow } from '../shared/email-metrics/counters.ts';
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
    // The overview's charts: a week of counters, an hour at a time, as the rollup writes them.
    const rows: CountRow[] = [];
    for (let h = 0; h < 7 * 24; h++) {
      const n = 50 + ((h * 37) % 200);
      rows.push({
        team_id: team.id,
        at: new Date(Date.now() - h * 3_600_000),
        domain_id: null,
        broadcast_id: null,
        email_id: null,
        counts: {
          sent: n,
          delivered: n - 3,
          bounced: 2,
          complained: h % 5 === 0 ? 1 : 0,
          opened: n >> 1,
          clicked: n >> 3,
        },
      });
    }
    await addCounts(db, rows);
    const key = await createKey(db, team.id, { name: 'bench', permission: 'full_access' });
    return {
      databaseUrl: database.url,
      blobDir,
      email,
      segmentId: segment[0].id as string,
      contactId: contact.id as string,
      key: key.token,
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

/**
 * A block document of `n` headings, texts and buttons and a footer (as long as a long newsletter), greeting with
 * `name` (a template's variable, or a broadcast's merge tag).
 */
function bigDocument(n: number, name: string) {
  const blocks = [];
  for (let i = 0; i < n; i++) {
    blocks.push({ id: `h${i}`, type: 'heading', text: `Section ${i} for {{{${name}}}}` });
    blocks.push({ id: `t${i}`, type: 'text', text: 'News of the week, in a few lines. '.repeat(6) });
    blocks.push({ id: `b${i}`, type: 'button', text: `Read part ${i}`, href: `https://bench-news.test/${i}` });
  }
  blocks.push({ id: 'foot', type: 'footer', text: 'Bench News, 1 Main St.' });
  return { preheader: 'This week at Bench News', blocks };
}

/**
 * What the largest pages show, made through the api as the dashboard makes it: a domain of the customer's (its DNS
 * records; then marked verified in SQL, as the worker's check would once they are published, so broadcasts may send
 * from it), a block template, a draft broadcast (its composer) and a scheduled one (its report: no worker runs here,
 * so its counts stay at zero).
 */
async function content(base: string, s: { key: string; databaseUrl: string; segmentId: string }) {
  const post = async (path: string, body: unknown) => {
    const res = await fetch(base + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json', 'user-agent': 'bench' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as { id: string };
    if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json.id;
  };
  const domainId = await post('/domains', { name: 'bench-news.test' });
  const db = createDb({ DATABASE_URL: s.databaseUrl }, { min: 0, max: 1 });
  try {
    await db('domain_records').where({ domain_id: domainId }).update({ status: 'verified' });
    const [domain] = await db('domains')
      .where({ id: domainId })
      .update({ status: 'verified', verified_at: new Date() })
      .returning(['team_id', 'region']);
    await liftSandbox(db, domain.team_id, domain.region);
  } finally {
    await db.destroy();
  }
  const broadcast = {
    from: 'News <news@bench-news.test>',
    subject: 'This week',
    segment_id: s.segmentId,
    document: bigDocument(10, 'FIRST_NAME|there'),
  };
  return {
    domainId,
    templateId: await post('/templates', {
      name: 'Newsletter',
      subject: 'This week',
      document: bigDocument(10, 'NAME'),
      variables: [{ key: 'NAME', type: 'string', fallback_value: 'there' }],
    }),
    draftId: await post('/broadcasts', { name: 'Draft', ...broadcast }),
    reportId: await post('/broadcasts', {
      name: 'Scheduled',
      ...broadcast,
      send: true,
      scheduled_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
      acknowledge_checks: true,
    }),
  };
}

type Made = Awaited<ReturnType<typeof content>>;

async function pageTimes(
  page: Page,
  base: string,
  s: { segmentId: string; contactId: string },
  made: Made,
  runs: number,
) {
  const pages: [string, string, string][] = [
    ['emails', '/dashboard/emails', '.empty, table'],
    ['contacts (100k)', '/dashboard/contacts', '#contacts-table tbody tr'],
    ['contacts of a segment', `/dashboard/contacts?segment=${s.segmentId}`, '#contacts-table tbody tr'],
    ['a contact', `/dashboard/contacts/${s.contactId}`, '#topics-h ~ ul li'],
    ['segment editor + count', `/dashboard/segments/${s.segmentId}`, '#live-count:not(:empty)'],
    ['imports', '/dashboard/contacts/imports', '#import-form'],
    ['topics', '/dashboard/topics', '#topics-list'],
    ['overview (charts)', '/dashboard/overview', '.charts svg[role=img]'],
    ['a domain (records)', `/dashboard/domains/${made.domainId}`, '.records tbody tr'],
    ['template editor (31 blocks)', `/dashboard/templates/${made.templateId}`, 'ol.blocks li.block'],
    ['template editor, preview shown', `/dashboard/templates/${made.templateId}`, 'iframe.email-frame'],
    ['broadcast composer (31 blocks)', `/dashboard/broadcasts/${made.draftId}`, 'ol.blocks li.block'],
    ['broadcast composer, preview shown', `/dashboard/broadcasts/${made.draftId}`, 'iframe.email-frame'],
    ['broadcast report', `/dashboard/broadcasts/${made.reportId}`, '#broadcast-counts'],
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

/**
 * The 50 MB CSV uploaded in Chromium: test/dashboard-audience-imports.test.ts run whole (its own platform,
 * worker and browser) with TEST_IMPORT_CSV_MB=50; `npm test` runs it at 10 MB (docs/testing.md). Its assertions
 * are the figures: the file streamed from disk (the page's heap grows < 20 MB), progress seen part-way, every row
 * counted. Answers whether it passed and the test's heap line.
 */
async function bigImport(): Promise<{ ok: boolean; heap: string; seconds: number }> {
  const started = Date.now();
  const ava = path.join(repoRoot, 'node_modules', '.bin', 'ava');
  const args = ['--verbose', '--timeout', '15m', 'test/dashboard-audience-imports.test.ts'];
  const child = spawn(ava, args, { cwd: repoRoot, env: { ...process.env, TEST_IMPORT_CSV_MB: '50' } });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (code !== 0) console.error(out);
  const heap = /page heap .*$/m.exec(out)?.[0] ?? 'no heap figure';
  return { ok: code === 0, heap, seconds: (Date.now() - started) / 1000 };
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
    // The broadcast pages' sending domain is a name under .test (no network here).
    RESERVED_TLDS_ALLOWED: 'test',
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
  const made = await content(api.url, s);
  const times = await pageTimes(page, api.url, s, made, o.runs);
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
  const big = await bigImport();
  console.log(
    `${big.ok ? 'PASS' : 'FAIL'} a 50 MB CSV uploaded in Chromium and imported (${fixed(big.seconds, 0)} s): ${big.heap}`,
  );
  return jsOk && readyOk && big.ok;
}
