// The person's and the team's own settings in a real browser (Debian's Chromium) against the real api and worker:
// two-factor enrolment by the QR code (the key it encodes is the one shown) and a code, the recovery codes shown
// once, new codes, turning it off (a wrong password first); signing out the other sessions; an export built by the
// worker process and downloaded; the team's deletion refused for a wrong name, scheduled by the typed name, canceled.
import test from 'ava';
import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { generate } from 'otplib';
import { encode } from 'uqr';
import { launchChromium, openPage, DESKTOP } from './helpers/browser.ts';
import { buildDashboard, look } from './helpers/dashboard.ts';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startEntry, type EntryProcess } from './helpers/processes.ts';
import { CookieClient, signIn } from './helpers/accounts.ts';
import { adminWithTeam, PASSWORD, signInOnPage, unexpected } from './helpers/dashboard-settings.ts';

let p: Platform;
let worker: EntryProcess;
let browser: Browser;
test.before(async () => {
  await buildDashboard();
  p = await startPlatform();
  worker = startEntry('worker/main.ts', p.config);
  browser = await launchChromium();
});
test.after.always(async () => {
  await browser?.close();
  await worker?.stop();
  await p?.close();
});

const alertText = async (page: Page) => ((await page.getByRole('alert').first().textContent()) ?? '').trim();

test.serial('two-factor: enrol by the QR code, recovery codes shown once, new codes, turn off', async (t) => {
  t.timeout(120_000);
  const email = 'mfa@people.test';
  await adminWithTeam(p.db, p.url, email, 'MFA team');
  const v = await openPage(browser, DESKTOP);
  const { page } = v;
  await signInOnPage(page, p.url, email, '/dashboard/settings/mfa');
  await page.locator('#mfa-state', { hasText: 'off' }).waitFor();
  await look(t, page, 'settings-mfa-off');
  const enrolled = page.waitForResponse((r) => r.url().endsWith('/auth/mfa/enrol'));
  await page.locator('#mfa-enrol').click();
  const { otpauth_url } = await (await enrolled).json();
  // Shown in groups of four characters, as people type it.
  const secret = ((await page.locator('#mfa-secret').textContent()) ?? '').replace(/ /g, '');
  t.true(otpauth_url.includes(`secret=${secret}`), 'the key shown is the one the QR code carries');
  // The QR code drawn is the encoding of that otpauth:// URL, module for module.
  const { data } = encode(otpauth_url, { ecc: 'M', border: 2 });
  const dark = data.flatMap((row, y) => row.flatMap((on, x) => (on ? [`M${x} ${y}h1v1h-1z`] : []))).join('');
  t.is(await page.getByRole('img', { name: 'QR code of your two-factor key' }).locator('path').getAttribute('d'), dark);
  await look(t, page, 'settings-mfa-enrol');

  await page.locator('#mfa-confirm-form input[name=code]').fill(await generate({ secret }));
  await page.locator('#mfa-confirm-form input[name=password]').fill(PASSWORD);
  await page.locator('#mfa-confirm-form button[type=submit]').click();
  await page.locator('#recovery-codes').waitFor();
  const codes = await page.locator('#recovery-codes li').allTextContents();
  t.is(codes.length, 10);
  for (const c of codes) t.regex(c, /^[a-z0-9]{5}-[a-z0-9]{5}$/);
  await page.locator('#mfa-state', { hasText: 'on' }).waitFor();
  await look(t, page, 'settings-mfa-codes');
  await page.reload();
  await page.locator('#mfa-state', { hasText: 'on' }).waitFor();
  t.is(await page.locator('#recovery-codes').count(), 0, 'shown once');
  t.false((await page.content()).includes(codes[0]));
  t.is(await page.locator('#codes-left').textContent(), '10');
  await look(t, page, 'settings-mfa-on');

  // This step's code was spent turning MFA on (a code works once): the next step's.
  const next = await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 });
  await page.locator('#new-codes-form input[name=code]').fill(next);
  await page.locator('#new-codes-form button[type=submit]').click();
  await page.locator('#recovery-codes').waitFor();
  const renewed = await page.locator('#recovery-codes li').allTextContents();
  t.is(renewed.length, 10);
  t.false(renewed.includes(codes[0]), 'new codes');
  await page.getByRole('button', { name: 'I have saved them' }).click();
  t.is(await page.locator('#recovery-codes').count(), 0);

  await page.locator('#mfa-disable-form input[name=password]').fill('not the password');
  await page.locator('#mfa-disable-form button[type=submit]').click();
  await page.getByRole('alert').waitFor();
  t.regex(await alertText(page), /password/);
  await look(t, page, 'settings-mfa-disable-error');
  await page.locator('#mfa-disable-form input[name=password]').fill(PASSWORD);
  await page.locator('#mfa-disable-form button[type=submit]').click();
  await page.locator('#mfa-state', { hasText: 'off' }).waitFor();
  t.deepEqual(unexpected(v), []);
  await v.context.close();
});

test.serial('sessions: the other browsers listed and signed out', async (t) => {
  t.timeout(120_000);
  const email = 'sessions@people.test';
  await adminWithTeam(p.db, p.url, email, 'Sessions team');
  const other = await signIn(p.url, email, PASSWORD);
  // Browsers of other kinds, each named as a person would name it.
  const agents: Record<string, string> = {
    'Firefox 132 on Windows': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:132.0) Gecko/20100101 Firefox/132.0',
    'Safari 17 on iOS':
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
    'Edge 131 on macOS':
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
  };
  for (const userAgent of Object.values(agents)) {
    const c = new CookieClient(p.url);
    t.is((await c.request('POST', '/auth/login', { body: { email, password: PASSWORD }, userAgent })).status, 200);
  }
  const v = await openPage(browser, DESKTOP);
  const { page } = v;
  await signInOnPage(page, p.url, email, '/dashboard/settings/sessions');
  await page.locator('#revoke-others').waitFor();
  // The admin's first client (made the team), the other one, the three browsers, and this browser.
  t.is(await page.locator('tbody tr').count(), 6);
  t.is(await page.locator('tbody tr', { hasText: 'this browser' }).count(), 1);
  const named = await page.locator('td.agent span[title]').allTextContents();
  for (const name of Object.keys(agents)) t.true(named.includes(name), `${name} in ${named.join(' | ')}`);
  t.true(named.includes('postwerk-tests 1.0'), 'a client that is no browser: its first product');
  const mine = page.locator('tbody tr', { hasText: 'this browser' }).locator('td.agent span[title]');
  t.regex((await mine.textContent()) ?? '', /^Chrome \d+ \(headless\) on Linux$/);
  t.regex((await mine.getAttribute('title')) ?? '', /HeadlessChrome\//, 'the header itself one hover away');
  await look(t, page, 'settings-sessions');
  t.is((await other.request('GET', '/me')).status, 200);
  await page.locator('#revoke-others').click();
  await page.getByText('No other session').waitFor();
  t.is(await page.locator('tbody tr').count(), 1);
  t.is((await other.request('GET', '/me')).status, 401, 'the other session ended');
  await look(t, page, 'settings-sessions-alone');
  t.deepEqual(unexpected(v), []);
  await v.context.close();
});

test.serial('export built by the worker and downloaded; deletion by the typed name, then canceled', async (t) => {
  t.timeout(240_000);
  const email = 'exporter@people.test';
  const team = 'Export <b>and</b> delete';
  await adminWithTeam(p.db, p.url, email, team);
  const v = await openPage(browser, DESKTOP);
  const { page } = v;
  await signInOnPage(page, p.url, email, '/dashboard/settings/export');
  await page.getByText('No exports yet').waitFor();
  await look(t, page, 'settings-export-empty');
  await worker.logged('worker.started', 150_000);
  await page.locator('#request-export').click();
  await page.locator('.badge', { hasText: /pending|running/ }).waitFor();
  const link = page.getByRole('link', { name: /Download the zip/ });
  await link.waitFor({ timeout: 90_000 });
  t.is(await page.locator('.badge').first().textContent(), 'completed');
  await look(t, page, 'settings-export');
  const download = page.waitForEvent('download');
  await link.click();
  const file = await download;
  t.regex(file.suggestedFilename(), /^postwerk-export-[0-9a-f-]+\.zip$/);
  const zip = await readFile((await file.path())!);
  t.is(zip.subarray(0, 2).toString(), 'PK', 'a zip archive');

  await page.goto(`${p.url}/dashboard/settings/deletion`);
  const confirm = page.locator('#delete-team-form input[name=confirm]');
  await confirm.waitFor();
  await look(t, page, 'settings-deletion');
  await confirm.fill('Export and delete');
  await page.locator('#delete-team-form button[type=submit]').click();
  await page.getByRole('alert').waitFor();
  t.regex(await alertText(page), /confirm/, "the api's refusal names the field");
  await look(t, page, 'settings-deletion-error');
  t.is(await confirm.inputValue(), 'Export and delete', 'what was typed stays');
  await confirm.fill(team);
  await page.locator('#delete-team-form button[type=submit]').click();
  await page.locator('#deletion-state', { hasText: 'scheduled for deletion' }).waitFor();
  await look(t, page, 'settings-deletion-scheduled');
  await page.locator('#cancel-deletion').click();
  await page.locator('#delete-team-form').waitFor();
  const row = await p.db('teams').where({ name: team }).first('deletion_status');
  t.is(row.deletion_status, 'none', 'the deletion is canceled');
  t.deepEqual(unexpected(v), []);
  await v.context.close();
});
