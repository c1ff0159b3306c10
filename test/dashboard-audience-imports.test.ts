// A CSV import in a real browser against the real api and worker: the empty state; a refused file shown with the
// api's message; a big file uploaded from the disk (the page's JavaScript heap never holds it: sampled through the
// upload), its progress bar seen part-way and followed to `completed`, its failed rows listed with their row numbers;
// a viewer gets no upload form; an ask that fails while following is shown and asked again. The file is
// TEST_IMPORT_CSV_MB megabytes: 10 (about 240,000 rows) in `npm test`; the 50 MB (52,400,000 bytes, about 1.2
// million rows) with TEST_IMPORT_CSV_MB=50, as `npm run bench` (BENCH_ONLY=dashboard) runs this file
// (docs/testing.md).
import test from 'ava';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './helpers/browser.ts';
import { buildDashboard, look } from './helpers/dashboard.ts';
import { signedInPage, startAudienceWorld, unexpected, type AudienceWorld } from './helpers/audience-dashboard.ts';
import { inTurns, RESTARTING } from './helpers/route-turns.ts';

const BIG_MB = Number(process.env.TEST_IMPORT_CSV_MB ?? 10);
/** Shown by the page as BIG_MB with one decimal (52,400,000 bytes: "50.0 MB"). */
const BIG_BYTES = BIG_MB * 1_048_000;
/**
 * A wait sized for `npm test`'s 10 MB, grown with the file beyond 25 MB: the whole file took 174 s at 10 MB and 505 s
 * at 50 MB on the same machine (docs/testing.md), so the upload and import take about 8 s a megabyte: the test's 600 s
 * left 95 s to spare at 50 MB, where it is now 1,200 s.
 */
const scaled = (ms: number) => Math.round(ms * Math.max(1, BIG_MB / 25));
/** Rows (1-based data rows) with no usable address: the import fails them, naming their row (header = row 1). */
const BAD = new Set([3, 10, 1000]);
let world: AudienceWorld;
let browser: Browser;
let url: string;
let dir: string;
test.before(async (t) => {
  // Building the dashboard and starting the platform (and its worker) take long on a loaded machine.
  t.timeout(300_000);
  await buildDashboard();
  world = await startAudienceWorld(true);
  browser = await launchChromium();
  url = world.p.url;
  dir = await mkdtemp(path.join(tmpdir(), 'pw-dash-import-'));
});
test.after.always(async () => {
  await browser?.close();
  await world?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The shortest padding row: `pad@people.test,x,` and its newline. */
const PAD_ROW_MIN = 'pad@people.test,x,\n'.length;

/** A CSV of `bytes` bytes (padded by the last rows' names), written as a stream; answers its data rows. */
async function bigCsv(file: string, bytes: number): Promise<number> {
  const out = createWriteStream(file);
  let written = 0;
  let rows = 0;
  const write = async (s: string) => {
    written += Buffer.byteLength(s);
    if (!out.write(s)) await once(out, 'drain');
  };
  await write('email,first_name,last_name\n');
  for (;;) {
    const i = rows + 1;
    const line = BAD.has(i) ? `not-an-address-${i},Bad,Row\n` : `big${i}@people.test,Ann,Lee${i % 1000}\n`;
    // Room left for the padding row (at least its address and commas), so the file comes out at exactly `bytes`.
    if (written + Buffer.byteLength(line) + PAD_ROW_MIN > bytes) break;
    await write(line);
    rows++;
  }
  const pad = bytes - written;
  if (pad > 0) {
    await write(`pad@people.test,${'x'.repeat(Math.max(1, pad - 'pad@people.test,,\n'.length))},\n`);
    rows++;
  }
  out.end();
  await once(out, 'finish');
  return rows;
}

const heapMb = async (page: Page) => {
  const cdp = await page.context().newCDPSession(page);
  const { usedSize } = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number };
  await cdp.detach();
  return usedSize / 1_048_576;
};

test.serial(`a refused file, then a ${BIG_MB} MB CSV uploaded from disk and followed to completed`, async (t) => {
  t.timeout(scaled(600_000));
  const v = await signedInPage(browser, url, world.admin);
  const { page } = v;
  await page.goto(`${url}/dashboard/contacts`);
  await page.getByRole('link', { name: 'Import a CSV' }).click();
  await page.getByText('No imports yet').waitFor();
  await look(t, page, 'audience-imports-empty');

  const bad = path.join(dir, 'twice.csv');
  await writeFile(bad, 'email,Email\na@people.test,b@people.test\n');
  await page.locator('#import-form input[type=file]').setInputFiles(bad);
  await page.getByRole('button', { name: 'Upload and import' }).click();
  await page.getByRole('alert').waitFor();
  t.regex((await page.getByRole('alert').textContent()) ?? '', /file/, "the api's refusal, naming the file");
  await look(t, page, 'audience-import-refused');

  const big = path.join(dir, 'big.csv');
  const rows = await bigCsv(big, BIG_BYTES);
  t.is((await stat(big)).size, BIG_BYTES);
  const before = await heapMb(page);
  await page.locator('#import-form input[type=file]').setInputFiles(big);
  await page.locator('#file-size', { hasText: `${BIG_MB.toFixed(1)} MB` }).waitFor();
  await page.getByRole('button', { name: 'Upload and import' }).click();
  let peak = before;
  while (!/\/imports\/[0-9a-f-]{36}$/.test(page.url())) {
    peak = Math.max(peak, await heapMb(page));
    await page.waitForTimeout(100);
  }
  t.log(`page heap ${before.toFixed(1)} MB before the upload, ${peak.toFixed(1)} MB at most during it`);
  t.true(
    peak - before < 20,
    `the page does not hold the ${BIG_MB} MB file (heap grew ${(peak - before).toFixed(1)} MB)`,
  );

  // Part-way: the bar moved and the import is running (its batches commit 5,000 rows at a time).
  await page.waitForFunction(
    () => {
      const bar = document.querySelector<HTMLProgressElement>('#import-progress');
      return bar !== null && bar.value > 0 && bar.value < 100;
    },
    undefined,
    { timeout: scaled(300_000), polling: 100 },
  );
  t.regex((await page.locator('#import-status').textContent()) ?? '', /in progress/);
  await look(t, page, 'audience-import-progress');
  await page.locator('#import-status', { hasText: 'completed' }).waitFor({ timeout: scaled(400_000) });
  t.is(await page.locator('#import-progress').evaluate((b: HTMLProgressElement) => b.value), 100);
  t.is(await page.locator('#count-created').textContent(), (rows - BAD.size).toLocaleString('en-US'));
  t.is(await page.locator('#count-failed').textContent(), BAD.size.toLocaleString('en-US'));
  const failed = await page.locator('#failures-table tbody tr td:first-child').allTextContents();
  t.deepEqual(
    failed,
    [...BAD].map((i) => String(i + 1)),
    'the failed rows, the header being row 1',
  );
  await look(t, page, 'audience-import-done');

  await page.getByRole('link', { name: 'Imports' }).click();
  await page.locator('table .badge.completed').waitFor();
  await look(t, page, 'audience-imports');
  t.deepEqual(unexpected(v), []);
  await v.context.close();

  const viewer = await signedInPage(browser, url, world.viewer);
  await viewer.page.goto(`${url}/dashboard/contacts/imports`);
  await viewer.page.locator('table .badge.completed').waitFor();
  t.is(await viewer.page.locator('#import-form').count(), 0, 'no upload for a viewer');
  await viewer.context.close();
});

test.serial(
  'an import followed through a failed ask: the error is shown, the page asks again and sees it end',
  async (t) => {
    t.timeout(120_000);
    const v = await signedInPage(browser, url, world.admin);
    const { page } = v;
    // The first answer from while the import ran (nothing read yet), the second a restarting api's 503.
    const running = (b: Record<string, unknown>) => ({
      ...b,
      status: 'in_progress',
      counts: { ...(b.counts as object), created: 0, updated: 0, skipped: 0, failed: 0 },
    });
    const imports = inTurns([running, 'restarting']);
    await page.route((u) => /^\/contacts\/imports\/[0-9a-f-]{36}$/.test(u.pathname), imports.handler);
    const small = path.join(dir, 'small.csv');
    await writeFile(small, 'email\nfollowed1@people.test\nfollowed2@people.test\n');
    await page.goto(`${url}/dashboard/contacts/imports`);
    await page.locator('#import-form input[type=file]').setInputFiles(small);
    await page.getByRole('button', { name: 'Upload and import' }).click();
    await page.getByRole('alert').filter({ hasText: RESTARTING }).waitFor({ timeout: 30_000 });
    await page.locator('#import-status', { hasText: 'completed' }).waitFor({ timeout: 30_000 });
    t.is(await page.locator('#count-created').textContent(), '2');
    t.is(await page.getByRole('alert').count(), 0, 'the error goes with the next answer');
    t.true(imports.asked() >= 3);
    t.deepEqual(
      unexpected(v).filter((e) => !/status of 503/.test(e)),
      [],
    );
    await v.context.close();
  },
);
