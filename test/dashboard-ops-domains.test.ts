// A domain's page in a real browser against the real api and worker, with BIND's named as the customer's DNS server:
// add a domain, publish its records through the auto-configure form (RFC 2136 with named's TSIG key), verify, and
// watch each record's status turn verified without reloading (the page polls while one is pending); rotate the DKIM
// key (a new pending record appears); turn click tracking on and enforce TLS in its settings (its records appear);
// upload a brand logo (shown from the api under the page's CSP; a bad SVG
// refused with the api's message) and remove it; a viewer is offered none of it. Screenshots at 1280 and 390 px.
import test, { type ExecutionContext } from 'ava';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './helpers/browser.ts';
import { answerConfirm, buildDashboard } from './helpers/dashboard.ts';
import { startAutoconfigureWorld, type AutoconfigureWorld } from './helpers/autoconfigure.ts';
import { startEntry, type EntryProcess } from './helpers/processes.ts';
import { browse, look, person, unexpected, type Person } from './helpers/dashboard-ops.ts';
import { until } from './helpers/wait.ts';
import { inTurns, RESTARTING } from './helpers/route-turns.ts';

const DOMAIN = 'dash-auto.test';
const LOGO = `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" version="1.2" baseProfile="tiny-ps" viewBox="0 0 64 64">
<title>Acme</title>
<rect width="64" height="64" fill="#0a5"/>
</svg>
`;

/** The domain's row and records as the database has them, and the worker's last lines about domains. */
async function checks(w: AutoconfigureWorld, entry: EntryProcess): Promise<string> {
  const domain = await w.p.db('domains').where({ name: DOMAIN }).first();
  const records = domain
    ? await w.p.db('domain_records').where({ domain_id: domain.id }).select('name', 'type', 'status', 'last_checked_at')
    : [];
  const lines = entry
    .output()
    .split('\n')
    .filter((l) => /domain|sweep|job\.failed/.test(l))
    .slice(-15);
  const { status, next_check_at, last_checked_at, check_count } = domain ?? {};
  return [
    `domain: ${JSON.stringify({ status, next_check_at, last_checked_at, check_count })}`,
    `records: ${JSON.stringify(records)}`,
    'the worker, last lines about domains:',
    ...lines,
  ].join('\n');
}

/**
 * Polls the api fails (restarting; two, so the notice is still up for both screenshots): the records stay on screen,
 * the page says it could not refresh them, and the next poll's answer takes the notice away.
 */
async function refreshFails(t: ExecutionContext, page: Page) {
  const domainPath = new URL(page.url()).pathname.replace('/dashboard', '');
  const asksForIt = (u: URL) => u.pathname === domainPath;
  const outage = inTurns(['restarting', 'restarting']);
  await page.route(asksForIt, outage.handler);
  const stale = page.locator('.stale', { hasText: `Could not refresh the domain: ${RESTARTING}` });
  await stale.waitFor({ timeout: 30_000 });
  t.is(await page.getByRole('heading', { name: DOMAIN }).count(), 1, 'the domain stays on screen');
  t.true((await page.locator('table.records tr').count()) > 1, 'its records too');
  await look(t, page, 'domain-refresh-failed');
  await stale.waitFor({ state: 'detached', timeout: 30_000 });
  t.true(outage.asked() >= 3, 'asked again after the failures');
  await page.unroute(asksForIt, outage.handler);
}

/**
 * The settings: click tracking on and the TLS policy enforced in one save, the form showing both once saved, and the
 * tracking host's records (a CNAME, and the CAA beside it) added to the list to publish.
 */
async function changeSettings(t: ExecutionContext, page: Page) {
  const settings = page.locator('#domain-settings');
  const open = settings.getByLabel(/Open tracking/);
  const click = settings.getByLabel(/Click tracking/);
  t.false(await open.isChecked(), 'open tracking off by default');
  t.false(await click.isChecked(), 'click tracking off by default');
  t.is(await page.locator('table.records tr', { hasText: 'CNAME' }).count(), 0, 'no tracking record yet');
  t.is(await settings.getByLabel('TLS for outgoing mail').inputValue(), 'opportunistic');
  await click.check();
  await settings.getByLabel('TLS for outgoing mail').selectOption('enforced');
  await settings.getByRole('button', { name: 'Save the settings' }).click();
  await settings.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  t.like(await world.p.db('domains').where({ name: DOMAIN }).first(), {
    tls: 'enforced',
    click_tracking: true,
    open_tracking: false,
    tracking_subdomain: 'links',
  });
  // (No named function inside: tsx names it with a helper the page does not have.)
  await page.waitForFunction(() => {
    const select = document.querySelector('#domain-settings select[name=tls]') as HTMLSelectElement | null;
    const [open, click] = ['open_tracking', 'click_tracking'].map(
      (name) => (document.querySelector(`#domain-settings input[name=${name}]`) as HTMLInputElement | null)?.checked,
    );
    return select?.value === 'enforced' && click === true && open === false;
  });
  const tracking = page.locator('table.records tr', { hasText: 'CNAME' });
  await tracking.waitFor();
  t.regex((await tracking.textContent()) ?? '', /links/, 'the CNAME at the tracking subdomain');
  t.is(await page.locator('table.records tr', { hasText: 'CAA' }).count(), 1, 'and the CAA for its certificate');
  await look(t, page, 'domain-settings');
}

/** A viewer reads the domain and its settings, and is offered no action. */
async function viewerReads(t: ExecutionContext, url: string) {
  const viewer = await person(world.p, 'domains-viewer@people.test', { teamId: owner.teamId, role: 'viewer' });
  const vv = await browse(browser, viewer);
  await vv.page.goto(url);
  await vv.page.getByRole('heading', { name: DOMAIN }).waitFor();
  await vv.page.getByText('No logo yet.').waitFor();
  for (const action of ['Verify DNS records', 'Rotate the DKIM key', 'Remove the logo'])
    t.is(await vv.page.getByRole('button', { name: action }).count(), 0, `no ${action} for a viewer`);
  t.is(await vv.page.locator('#auto-configure-form, #logo-file, #domain-settings').count(), 0);
  await vv.page.getByText('Enforced: never sent in the clear').waitFor();
  const facts = vv.page.locator('section[aria-labelledby=settings-title] dl');
  t.is(await facts.locator('dt:has-text("Click tracking") + dd').textContent(), 'on');
  t.is(await facts.locator('dt:has-text("Open tracking") + dd').textContent(), 'off');
  await look(t, vv.page, 'domain-viewer');
  // An address whose id is malformed (the api's 422 invalid_parameter) reads as one that names nothing.
  await vv.page.goto(url.replace(/[^/]+$/, 'not-an-id'));
  const alert = vv.page.getByRole('alert');
  await alert.waitFor();
  t.is(await alert.locator('strong').textContent(), 'Not found: this address does not name the domain');
  await look(t, vv.page, 'domain-malformed-id');
  await vv.context.close();
}

let world: AutoconfigureWorld;
let worker: EntryProcess;
let browser: Browser;
let owner: Person;

test.before(async () => {
  await buildDashboard();
  world = await startAutoconfigureWorld({ [DOMAIN]: [] });
  // At debug the worker logs each domain it checks (domain.checked), which a failure below quotes.
  worker = startEntry('worker/main.ts', world.p.config, { LOG_LEVEL: 'debug' });
  await worker.logged('worker.started', 120_000);
  browser = await launchChromium();
  owner = await person(world.p, 'domains-owner@people.test');
});
test.after.always(async () => {
  await browser?.close();
  await worker?.stop();
  await world?.close();
});

test.serial('add, auto-configure, verify live, rotate DKIM, brand logo', async (t) => {
  t.timeout(300_000);
  const url = world.p.url;
  const v = await browse(browser, owner);
  const { page } = v;
  await page.goto(`${url}/dashboard/domains`);
  await page.locator('#add-domain-form input[name=name]').fill(DOMAIN);
  await page.locator('#add-domain-form button[type=submit]').click();
  await page.getByRole('heading', { name: DOMAIN }).waitFor();
  // Nothing published yet: the records stay pending, and the page says it keeps checking.
  await page.getByRole('button', { name: 'Verify DNS records' }).click();
  await page.getByText('Records are being checked').waitFor();
  await look(t, page, 'domain-pending');
  // On a phone each record is a block: the DKIM value gets the width of the page, not a one-word column.
  await page.setViewportSize({ width: 390, height: 844 });
  const dkim = page.locator('table.records tr', { hasText: '_domainkey' }).locator('td.value code');
  t.true((await dkim.boundingBox())!.width > 250, 'the DKIM value is readable on a phone');
  await page.setViewportSize({ width: 1280, height: 900 });

  await refreshFails(t, page);

  await page.getByText('Publish the records by DNS update').click();
  const form = page.locator('#auto-configure-form');
  await form.getByLabel('DNS server').fill('127.0.0.1');
  await form.getByLabel('Port').fill(String(world.named.port));
  await form.getByLabel('TSIG key name').fill(world.named.key.name);
  await form.getByLabel('TSIG secret').fill('bm90IHRoZSBrZXk=');
  await form.getByRole('button', { name: 'Publish the records' }).click();
  await form.getByRole('alert').waitFor();
  t.regex((await form.getByRole('alert').textContent()) ?? '', /\S/, 'a wrong key: the api message');
  await look(t, page, 'domain-autoconfigure-error');
  await form.getByLabel('TSIG key name').fill(world.named.key.name);
  await form.getByLabel('TSIG secret').fill(world.named.key.secret);
  await form.getByLabel('DNS server').fill('127.0.0.1');
  await form.getByLabel('Port').fill(String(world.named.port));
  await form.getByRole('button', { name: 'Publish the records' }).click();
  await page.locator('#auto-configure-result').waitFor();
  t.regex((await page.locator('#auto-configure-result').textContent()) ?? '', /Done: [1-9]\d* created/);
  // The worker reads the records back from named: each turning verified below shows they were published.
  // No reload: the polling page shows each record turn verified once the worker found them in named. Auto-configure
  // asked for a check at once. On a loaded machine a record can stay pending a while (a CI run saw one pending for a
  // minute) or end temporary_failure (a lookup out of time, checked again only later): a person asks again, with
  // Verify and, once the page has stopped polling, Refresh status, as the page offers. A failure says what the
  // worker last did.
  const badges = page.locator('table.records td[data-label=Status] .badge');
  let askedAt = Date.now();
  await until(
    async () => {
      const open = (await badges.allTextContents()).filter((s) => s === 'pending' || s === 'temporary_failure');
      if (open.length === 0) return true;
      if (Date.now() - askedAt > 10_000) {
        askedAt = Date.now();
        await page.getByRole('button', { name: 'Verify DNS records' }).click();
        if (!open.includes('pending')) await page.getByRole('button', { name: 'Refresh status' }).click();
      }
      return false;
    },
    { what: 'no record left pending or temporary_failure', timeoutMs: 150_000, intervalMs: 1000 },
  ).catch(async (err: Error) => {
    throw new Error(`${err.message}\n${await checks(world, worker)}`);
  });
  await page.getByText('Records are being checked').waitFor({ state: 'detached' });
  const statuses = await badges.allTextContents();
  t.true(statuses.length >= 2);
  t.deepEqual([...new Set(statuses)], ['verified']);
  t.is(await page.locator('h1 + p .badge').textContent(), 'verified');
  await look(t, page, 'domain-verified');

  await page.getByRole('button', { name: 'Rotate the DKIM key' }).click();
  await answerConfirm(page, 'Rotate the DKIM key?', 'Rotate');
  await page.getByText(/New DKIM selector/).waitFor();
  // The new record shows pending until the worker's sweep looks at it; on a busy machine the sweep may come before
  // the page's next look (a CI run once missed the pending badge), so its status is not waited for here.
  await page.waitForFunction(
    () =>
      [...document.querySelectorAll('table.records tr')].filter((r) => /_domainkey/.test(r.textContent ?? ''))
        .length === 2,
  );
  t.is(await page.locator('table.records tr', { hasText: '_domainkey' }).count(), 2, 'old and new DKIM records');
  await changeSettings(t, page);

  await page
    .locator('#logo-file')
    .setInputFiles({ name: 'bad.svg', mimeType: 'image/svg+xml', buffer: Buffer.from('<svg') });
  await page.locator('section[aria-labelledby=brand-title] [role=alert]').waitFor();
  await page
    .locator('#logo-file')
    .setInputFiles({ name: 'logo.svg', mimeType: 'image/svg+xml', buffer: Buffer.from(LOGO) });
  const img = page.getByRole('img', { name: `The brand logo of ${DOMAIN}` });
  await img.waitFor();
  await page.waitForFunction(() => (document.querySelector('.logo img') as HTMLImageElement | null)?.naturalWidth);
  t.true(await img.evaluate((i: HTMLImageElement) => i.naturalWidth > 0), 'the logo loads from the api');
  await page.locator('table.records tr', { hasText: '_bimi' }).waitFor();
  await look(t, page, 'domain-brand');
  await page.getByRole('button', { name: 'Remove the logo' }).click();
  await answerConfirm(page, 'Remove the brand logo?', 'Remove');
  await page.getByText('No logo yet.').waitFor();
  // The console's line for the outage's 503 (above) is the one expected.
  t.deepEqual(
    unexpected(v.errors).filter((e) => !/status of 503/.test(e)),
    [],
  );
  await v.context.close();

  await viewerReads(t, page.url());
});
