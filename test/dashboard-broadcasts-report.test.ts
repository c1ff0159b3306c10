// A broadcast's report page in a real browser (Debian's headless Chromium) from what really happened to its copies:
// delivered by the mta's deliver job to a loopback sink, links followed over HTTP on the tracking listener (people
// counted; a link scanner flagged as a machine and counted nowhere). The page shows the counts, the recipients by type
// paged with Newer and Older, and the clicked links with clicks and unique clicks; axe and screenshots. A sent
// broadcast whose copies are still on their way is followed until they arrive.
import test from 'ava';
import { created, fanOutAndDeliver, fanoutDeps } from './helpers/broadcasts.ts';
import { runBroadcast } from '../shared/broadcasts/fanout.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { htmlOf, startTrackingWorld, trackedSender, type TrackingWorld } from './helpers/tracking.ts';
import { buildDashboard } from './helpers/dashboard.ts';
import { launchChromium } from './helpers/browser.ts';
import { browse, look, person, unexpected } from './helpers/dashboard-ops.ts';
import { until } from './helpers/wait.ts';
import { inTurns, RESTARTING } from './helpers/route-turns.ts';
import type { Browser } from 'playwright-core';

let world: TrackingWorld;
let browser: Browser;
test.before(async () => {
  await buildDashboard();
  world = await startTrackingWorld();
  browser = await launchChromium();
});
test.after.always(async () => {
  await browser?.close();
  await world?.close();
});

const SCANNER = 'Barracuda Sentinel (EE)';

/**
 * A broadcast sent to `people` (contacts of a new segment, at `<prefix>-inbox.test`) by a tracked sender of
 * `<prefix>-news.test`; its copies not yet made.
 */
async function broadcastTo(prefix: string, people: string[], content: { name: string; subject: string; html: string }) {
  const { w } = world;
  w.mx(`${prefix}-inbox.test`);
  const sender = await trackedSender(w, `${prefix}-news.test`);
  const segment = await created(w, sender.team, '/segments', { name: 'Readers' });
  for (const email of people) await created(w, sender.team, '/contacts', { email, audience_id: segment });
  const from = `News <news@${sender.domain.name}>`;
  const id = await created(w, sender.team, '/broadcasts', { ...content, segment_id: segment, from, send: true });
  return { sender, id };
}

test('the report: counts, recipients by type paged, clicked links with clicks and unique clicks', async (t) => {
  t.timeout(240_000);
  const { w, listener } = world;
  const people = Array.from({ length: 22 }, (_, i) => `p${String(i).padStart(2, '0')}@dr-inbox.test`);
  const { sender, id } = await broadcastTo('dr', people, {
    name: 'June <script>alert(1)</script>',
    subject: 'June',
    html: '<p><a href="https://dr-news.test/a">A</a> <a href="https://dr-news.test/b">B</a></p><p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Leave</a></p>',
  });
  const run = await fanOutAndDeliver(w, id);
  t.is(run.outcome, 'sent');
  const links = async (address: string) => (await htmlOf(w.sink.deliveredTo(address)[0].raw)).hrefs;
  const [ann, bob, cy] = [await links(people[0]), await links(people[1]), await links(people[2])];
  // p00 clicks A twice and B once, p01 clicks A; p02's mail scanner fetches both (a machine: counted nowhere).
  for (const url of [ann[0], ann[0], ann[1], bob[0]]) t.is((await listener.hit(url)).status, 302);
  for (const url of cy.slice(0, 2)) await listener.hit(url, { userAgent: SCANNER });
  await listener.recorder.flush();

  const member = await person(w.p, `member-${id.slice(0, 8)}@people.test`, { teamId: sender.team.id, role: 'member' });
  const { page, context, errors } = await browse(browser, member);
  await page.goto(`${w.p.url}/dashboard/broadcasts`);
  await page.getByRole('link', { name: 'June <script>alert(1)</script>' }).click();
  await page.locator('#counts-title').waitFor();
  t.is(await page.locator('h1').textContent(), 'June <script>alert(1)</script>');
  t.is(await page.locator('#broadcast-status').textContent(), 'sent');
  await until(async () => (await page.locator('[data-count=delivered] dd').textContent()) === '22', {
    what: 'the delivered count',
  });
  t.is(await page.locator('[data-count=clicked] dd').textContent(), '2', 'the scanner is no clicker');

  // The clicked links: people only.
  const linkRows = page.locator('#links-title ~ .table-wrap tbody tr');
  await linkRows.first().waitFor();
  const rows = (await linkRows.evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).innerText))).map((s) =>
    s.split('\t').map((c) => c.trim()),
  );
  t.deepEqual(
    rows.sort((a, b) => a[0].localeCompare(b[0])),
    [
      ['https://dr-news.test/a', '3', '2'],
      ['https://dr-news.test/b', '1', '1'],
    ],
  );

  // Recipients: 22 sent, paged 20 and 2; the clickers with their counts.
  const recipientRows = page.locator('#recipients-table tbody tr');
  await until(async () => (await recipientRows.count()) === 20, { what: 'the first page' });
  await page.getByRole('button', { name: 'Older' }).first().click();
  await until(async () => (await recipientRows.count()) === 2, { what: 'the second page' });
  await page.getByRole('button', { name: 'Newer' }).first().click();
  await until(async () => (await recipientRows.count()) === 20, { what: 'back to the first page' });
  await page.getByLabel('Show recipients').selectOption('clicked');
  await until(async () => (await recipientRows.count()) === 2, { what: 'the clickers' });
  t.deepEqual(
    (
      await recipientRows.evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).innerText.replace(/\s+/g, ' ')))
    ).sort(),
    [`${people[0]} 3`, `${people[1]} 1`],
  );
  await look(t, page, 'broadcast-report-clicks');
  // Keyboard: the type picker and the pager are reachable and work with keys.
  await page.getByLabel('Show recipients').focus();
  await page.keyboard.press('Home');
  await until(async () => (await recipientRows.count()) === 20, { what: 'sent again, by keyboard' });
  t.deepEqual(unexpected(errors), []);
  await context.close();
});

test('a sent broadcast whose copies are still on their way: the counts follow them until they arrive', async (t) => {
  t.timeout(240_000);
  const { w } = world;
  const people = ['f0@df-inbox.test', 'f1@df-inbox.test', 'f2@df-inbox.test'];
  const { sender, id } = await broadcastTo('df', people, {
    name: 'Followed',
    subject: 'On its way',
    html: '<p>Hi</p><p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Leave</a></p>',
  });
  // Every copy made (the broadcast is sent), none delivered yet: the mta's jobs run once the page is open.
  const deps = fanoutDeps(w);
  t.is(await runBroadcast(deps, id), 'sent');
  const member = await person(w.p, `follow-${id.slice(0, 8)}@people.test`, { teamId: sender.team.id, role: 'member' });
  const { page, context, errors } = await browse(browser, member);
  await page.goto(`${w.p.url}/dashboard/broadcasts/${id}`);
  await page.locator('#counts-following').waitFor();
  t.is(await page.locator('#broadcast-status').textContent(), 'sent');
  t.is(await page.locator('[data-count=sent] dd').textContent(), '3');
  t.is(await page.locator('[data-count=delivered] dd').textContent(), '0');
  await look(t, page, 'broadcast-report-following');
  // Follows the api fails (restarting; a few, so the notice is still up for both screenshots): the counts stay, the
  // page says it could not refresh them, and goes on.
  const outage = inTurns(['restarting', 'restarting', 'restarting', 'restarting']);
  await page.route((u) => u.pathname === `/broadcasts/${id}`, outage.handler);
  const stale = page.locator('.stale', { hasText: `Could not refresh the broadcast: ${RESTARTING}` });
  await stale.waitFor({ timeout: 30_000 });
  t.is(await page.locator('[data-count=sent] dd').textContent(), '3', 'the counts stay on screen');
  await look(t, page, 'broadcast-report-refresh-failed');
  await stale.waitFor({ state: 'detached', timeout: 30_000 });
  for (const emailId of deps.handed) await processDelivery(w.deps, emailId);
  await until(async () => (await page.locator('[data-count=delivered] dd').textContent()) === '3', {
    what: 'the delivered count followed',
    timeoutMs: 30_000,
  });
  await page.locator('#counts-following').waitFor({ state: 'detached' });
  t.true(outage.asked() >= 5, 'asked again after the failures');
  // The console's line for the outage's 503 is the one expected.
  t.deepEqual(
    unexpected(errors).filter((e) => !/status of 503/.test(e)),
    [],
  );
  await context.close();
});
