// The import's upload form in a real browser against the real api and worker: the CSV's header row read in the page,
// a column mapped to a contact property and another to the address (`column_map`), a segment and a topic choice for
// the imported contacts; the import completes and the contacts are in the segment with the mapped property. Then the
// segment's page searches within its members (GET /contacts with `segment_id` and `search`).
import test from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from './helpers/browser.ts';
import { buildDashboard, look } from './helpers/dashboard.ts';

import { signedInPage, startAudienceWorld, unexpected, type AudienceWorld } from './helpers/audience-dashboard.ts';
import { createKey } from '../shared/api-keys/keys.ts';

let world: AudienceWorld;
let browser: Browser;
let url: string;
let dir: string;
let key: string;
test.before(async (t) => {
  t.timeout(300_000);
  await buildDashboard();
  world = await startAudienceWorld(true);
  browser = await launchChromium();
  url = world.p.url;
  dir = await mkdtemp(path.join(tmpdir(), 'pw-dash-map-'));
  key = (await createKey(world.p.db, world.teamId, { name: 'test', permission: 'full_access' })).token;
});
test.after.always(async () => {
  await browser?.close();
  await world?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const api = (method: string, p: string, body?: unknown) => world.p.request(method, p, { key, body });

test.serial(
  'an import with a mapped column, a segment and a topic; the segment page searches its members',
  async (t) => {
    t.timeout(240_000);
    t.is((await api('POST', '/contact-properties', { key: 'plan', type: 'string' })).status, 201);
    const segment = await api('POST', '/segments', { name: 'Imported <b>people</b>' });
    t.is(segment.status, 201, segment.text);
    const topic = await api('POST', '/topics', { name: 'News', default_subscription: 'opt_out' });
    t.is(topic.status, 201, topic.text);
    const csv = path.join(dir, 'people.csv');
    // "Mail" is no field's name: unmapped, the import would find no address. "Tier" fills the `plan` property.
    await writeFile(
      csv,
      ['"Mail",First_Name,Tier', 'ada@mapped.test,Ada,gold', 'bob@mapped.test,Bob,silver', 'cy@mapped.test,Cy,gold']
        .join('\n')
        .concat('\n'),
    );

    const v = await signedInPage(browser, url, world.admin);
    const { page } = v;
    await page.goto(`${url}/dashboard/contacts/imports`);
    await page.locator('#import-form input[type=file]').setInputFiles(csv);
    const columns = page.locator('#column-map');
    await columns.getByLabel('Column Mail').waitFor();
    t.deepEqual(
      await columns.locator('label.field code').allTextContents(),
      ['Mail', 'First_Name', 'Tier'],
      'the header row read in the page',
    );
    await columns.getByLabel('Column Mail').selectOption('email');
    await columns.getByLabel('Column Tier').waitFor();
    await columns.getByLabel('Column Tier').selectOption('property:plan');
    await page.locator('#import-segments').getByLabel('Imported <b>people</b>').check();
    await page.locator('#import-topics').getByLabel('News').selectOption('opt_in');
    await look(t, page, 'import-mapping');
    await page.getByRole('button', { name: 'Upload and import' }).click();
    await page.waitForURL(/\/dashboard\/contacts\/imports\/[^/]+$/);
    await page.locator('#import-status', { hasText: 'completed' }).waitFor({ timeout: 120_000 });

    const members = await api('GET', `/contacts?segment_id=${segment.body.id}`);
    t.deepEqual(
      members.body.data.map((c: { email: string }) => c.email).sort(),
      ['ada@mapped.test', 'bob@mapped.test', 'cy@mapped.test'],
      'every imported contact is in the segment',
    );
    const ada = await api('GET', '/contacts/ada@mapped.test');
    t.is(ada.body.first_name, 'Ada', 'First_Name read by its own name');
    t.deepEqual(ada.body.properties.plan, { type: 'string', value: 'gold' }, 'the mapped property');
    const topics = await api('GET', '/contacts/ada@mapped.test/topics');
    t.is(topics.body.data.find((x: { id: string }) => x.id === topic.body.id)?.subscription, 'opt_in');

    // The segment's page: its members, searched among them only (a contact outside the segment is never found).
    t.is((await api('POST', '/contacts', { email: 'ada-outside@other.test', first_name: 'Ada' })).status, 201);
    await page.goto(`${url}/dashboard/segments/${segment.body.id}`);
    const table = page.locator('.segment-members #contacts-table tbody td.address');
    await table.first().waitFor();
    t.is(await table.count(), 3);
    await page.getByLabel('Search this segment').fill('ADA');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL(/search=ADA/);
    await page.waitForFunction(() => document.querySelectorAll('.segment-members td.address').length === 1);
    t.deepEqual(await table.allTextContents(), ['ada@mapped.test']);
    await look(t, page, 'segment-search');
    await page.getByLabel('Search this segment').fill('nobody');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText("No member's address or name contains “nobody”.").waitFor();
    t.deepEqual(unexpected(v), []);
    await v.context.close();
  },
);
