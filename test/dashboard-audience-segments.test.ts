// The segment pages in a real browser against the real api: a filter built with the builder (all / any / not
// groups, conditions of several kinds), the live count following it (checked against SQL), a value the api refuses
// shown at its path in the builder, saved, opened again as it was saved, changed, deleted; a viewer reads it only;
// a count the api never answered (unreachable) is said, and counted again once it answers.
import test from 'ava';
import type { Browser, Page, Route } from 'playwright-core';
import { launchChromium } from './helpers/browser.ts';
import { buildDashboard, look } from './helpers/dashboard.ts';
import { signedInPage, startAudienceWorld, unexpected, type AudienceWorld } from './helpers/audience-dashboard.ts';
import { seedAudience } from '../bench/segments-seed.ts';

const CONTACTS = 2000;
let world: AudienceWorld;
let browser: Browser;
let url: string;
test.before(async (t) => {
  // Building the dashboard and starting the platform (and its worker) take long on a loaded machine.
  t.timeout(300_000);
  await buildDashboard();
  world = await startAudienceWorld(false);
  await seedAudience(world.p.db, world.teamId, CONTACTS);
  browser = await launchChromium();
  url = world.p.url;
});
test.after.always(async () => {
  await browser?.close();
  await world?.close();
});

const count = async (where: string) =>
  Number(
    (await world.p.db.raw(`select count(*) as n from contacts where team_id = ? and ${where}`, [world.teamId])).rows[0]
      .n,
  );

/** The condition at `path`'s select or input named `what` (Field, Operator, Property, Topic, Value, Days). */
const input = (page: Page, what: string, path: string) => page.getByLabel(`${what} of the condition at ${path}`);

async function liveCount(page: Page, n: number) {
  await page.locator('#live-count', { hasText: `matches ${n.toLocaleString('en-US')} contact` }).waitFor();
}

test.serial('a filter built, counted live, refused at its path, saved, reopened, changed and deleted', async (t) => {
  t.timeout(240_000);
  const v = await signedInPage(browser, url, world.admin);
  const { page } = v;
  await page.goto(`${url}/dashboard/segments`);
  await page.getByRole('link', { name: 'New segment' }).click();
  await page.waitForURL(`${url}/dashboard/segments/new`);
  await page.getByText('No filter: only contacts added by hand').waitFor();
  await page.getByLabel('Name').fill('Trials <b>engaged</b>');

  // all: [ property plan equals "trial", not { any: [ seats > 40, address ends with "@d3.bench.test" ] } ]
  await page.getByRole('button', { name: 'Add condition' }).click();
  await input(page, 'Field', 'filter.all.0').selectOption('property');
  await input(page, 'Property', 'filter.all.0').selectOption('plan');
  await input(page, 'Operator', 'filter.all.0').selectOption('equals');
  await input(page, 'Value', 'filter.all.0').fill('trial');
  const trials = await count(`properties->>'plan' = 'trial'`);
  await liveCount(page, trials);
  await look(t, page, 'audience-segment-builder');

  await page.getByRole('button', { name: 'Add group' }).last().click();
  const group = page.locator('[data-path="filter.all.1"]');
  await group.getByRole('checkbox', { name: 'Not' }).first().check();
  await input(page, 'Field', 'filter.all.1.not.any.0').selectOption('property');
  await input(page, 'Property', 'filter.all.1.not.any.0').selectOption('seats');
  await input(page, 'Operator', 'filter.all.1.not.any.0').selectOption('greater_than');
  await input(page, 'Value', 'filter.all.1.not.any.0').fill('many');
  const refused = page.locator('[data-path="filter.all.1.not.any.0"] .node-errors');
  await refused.waitFor();
  t.regex((await refused.textContent()) ?? '', /filter\.all\.1\.not\.any\.0\.value/, 'the refusal at its path');
  await look(t, page, 'audience-segment-refused');
  await input(page, 'Value', 'filter.all.1.not.any.0').fill('40');
  await group.getByRole('button', { name: 'Add condition' }).click();
  await input(page, 'Field', 'filter.all.1.not.any.1').selectOption('email');
  await input(page, 'Operator', 'filter.all.1.not.any.1').selectOption('ends_with');
  await input(page, 'Value', 'filter.all.1.not.any.1').fill('@d3.bench.test');
  const expected = await count(
    `properties->>'plan' = 'trial' and not ((properties->>'seats')::numeric > 40 or lower(email) like '%@d3.bench.test')`,
  );
  await liveCount(page, expected);
  t.is(await refused.count(), 0, 'the refusal is gone once the value is a number');

  await page.getByRole('button', { name: 'Create segment' }).click();
  await page.waitForURL(/\/dashboard\/segments\/[0-9a-f-]{36}$/);
  const id = page.url().split('/').pop()!;
  const saved = await world.p.db('segments').where({ id }).first();
  t.is(saved.name, 'Trials <b>engaged</b>');
  t.deepEqual(saved.filter, {
    all: [
      { field: 'property', key: 'plan', operator: 'equals', value: 'trial' },
      {
        not: {
          any: [
            { field: 'property', key: 'seats', operator: 'greater_than', value: 40 },
            { field: 'email', operator: 'ends_with', value: '@d3.bench.test' },
          ],
        },
      },
    ],
  });
  await page.reload();
  await page.locator('#live-count', { hasText: `Members as saved: ${expected.toLocaleString('en-US')}` }).waitFor();
  t.is(await input(page, 'Value', 'filter.all.1.not.any.1').inputValue(), '@d3.bench.test', 'reopened as saved');
  t.is(await page.getByRole('heading', { level: 1 }).textContent(), 'Trials <b>engaged</b>', 'the name as text');
  await look(t, page, 'audience-segment');

  // Changed: the group becomes "all", a topic condition and an activity condition join the root.
  await page.getByLabel('Group at filter.all.1: match').selectOption('all');
  await page.getByRole('button', { name: 'Add condition' }).last().click();
  await input(page, 'Field', 'filter.all.2').selectOption('topic');
  await input(page, 'Topic', 'filter.all.2').selectOption({ label: 'News' });
  await page.getByRole('button', { name: 'Add condition' }).last().click();
  await input(page, 'Field', 'filter.all.3').selectOption('opened');
  await input(page, 'Days', 'filter.all.3').fill('30');
  await page.locator('#live-count', { hasText: 'matches' }).waitFor();
  await page.getByRole('button', { name: 'Save segment' }).click();
  await page.waitForFunction(() => !document.querySelector('#segment-form button[type=submit][aria-busy=true]'));
  await t.notThrowsAsync(async () => {
    const row = await world.p.db('segments').where({ id }).first();
    t.deepEqual(row.filter.all.slice(2), [
      { field: 'topic', operator: 'subscribed', topic_id: row.filter.all[2].topic_id },
      { field: 'opened', operator: 'within_last_days', days: 30 },
    ]);
    t.deepEqual(Object.keys(row.filter.all[1].not), ['all']);
  });

  await page.goto(`${url}/dashboard/segments`);
  await page.getByRole('link', { name: 'Trials <b>engaged</b>', exact: true }).click();
  await page.getByRole('button', { name: 'Delete Trials <b>engaged</b>' }).click();
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await page.waitForURL(`${url}/dashboard/segments`);
  await page.getByText('No segments yet').waitFor();
  t.deepEqual(unexpected(v), []);
  await v.context.close();
});

test.serial('a viewer sees a segment read-only, with its live count', async (t) => {
  t.timeout(120_000);
  const res = await world.p.db('segments').insert({
    id: '01900000-0000-7000-8000-000000000001',
    team_id: world.teamId,
    name: 'Unsubscribed',
    filter: JSON.stringify({ all: [{ field: 'unsubscribed', operator: 'equals', value: true }] }),
  });
  t.truthy(res);
  const v = await signedInPage(browser, url, world.viewer);
  const { page } = v;
  await page.goto(`${url}/dashboard/segments/01900000-0000-7000-8000-000000000001`);
  await liveCount(page, await count('unsubscribed'));
  t.true(await input(page, 'Field', 'filter.all.0').isDisabled(), 'read-only');
  t.is(await page.getByRole('button', { name: /Save|Delete|Add/ }).count(), 0, 'no action for a viewer');
  await look(t, page, 'audience-segment-viewer');
  t.deepEqual(unexpected(v), []);
  await v.context.close();
});

test.serial('the live count when the api cannot be reached: said, then counted once it answers again', async (t) => {
  t.timeout(120_000);
  const v = await signedInPage(browser, url, world.admin);
  const { page } = v;
  await page.goto(`${url}/dashboard/segments/new`);
  await page.getByText('No filter: only contacts added by hand').waitFor();
  const counting = (u: URL) => u.pathname === '/segments/count';
  const unreachable = (route: Route) => route.abort('connectionrefused');
  await page.route(counting, unreachable);
  await page.getByRole('button', { name: 'Add condition' }).click();
  await input(page, 'Field', 'filter.all.0').selectOption('property');
  await input(page, 'Property', 'filter.all.0').selectOption('plan');
  await input(page, 'Operator', 'filter.all.0').selectOption('equals');
  await input(page, 'Value', 'filter.all.0').fill('trial');
  await page.locator('#live-count', { hasText: 'cannot be counted yet' }).waitFor();
  t.is(
    await page.getByRole('alert').textContent(),
    'The api could not be reached. (network_error)',
    "said as such, not as the browser's TypeError",
  );
  await page.unroute(counting, unreachable);
  await input(page, 'Value', 'filter.all.0').fill('trial ');
  await input(page, 'Value', 'filter.all.0').fill('trial');
  await liveCount(page, await count(`properties->>'plan' = 'trial'`));
  t.is(await page.getByRole('alert').count(), 0, 'the error goes with the answer');
  t.deepEqual(
    unexpected(v).filter((e) => !/ERR_CONNECTION_REFUSED/.test(e)),
    [],
  );
  await v.context.close();
});
