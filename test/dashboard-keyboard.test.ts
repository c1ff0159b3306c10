// Every dashboard page not keyboard-tested elsewhere, used without a mouse in a real browser (Debian's headless
// Chromium) against the real api: on each page Tab walks through every link, button and field (each reached, each
// with a visible focus ring), then the page's main action is done with keys alone (typing, Tab, Enter, Space, the
// arrows on a select), no pointer event reaching the page (test/helpers/dashboard.ts keyboardOnly). One platform
// (with the MX on loopback, for received mail) and one test per group of pages. Covered elsewhere: the pages before
// the dashboard (dashboard-keyboard-auth), sign-in and the settings (dashboard-settings-keyboard), the template
// editor, the composer and the report (dashboard-templates, dashboard-broadcasts), the consent page
// (oauth-consent-scopes), the team switcher (dashboard-keys-teams), and the emails pages (their own tests).
import test from 'ava';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './helpers/browser.ts';
import { buildDashboard, focused, keyboardOnly, look, tabToName, whileLoading } from './helpers/dashboard.ts';
import { PDF, startReceivingWorld, type ReceivingWorld } from './helpers/receiving-world.ts';
import { browse, chooseFileWithKeys, person, unexpected, type Person } from './helpers/dashboard-ops.ts';
import { newId } from '../shared/ids.ts';
import { fanOutSettled } from '../shared/webhooks/fanout.ts';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

let world: ReceivingWorld;
let browser: Browser;
let owner: Person;
let url: string;
const RX = 'kb-inbox.test';

test.before(async (t) => {
  t.timeout(300_000);
  await buildDashboard();
  // An http public address: cookies without the __Host- prefix, as on loopback (as dashboard-ops-received).
  world = await startReceivingWorld({ PUBLIC_BASE_URL: 'http://mail.example-platform.test' });
  url = world.p.url;
  browser = await launchChromium();
  owner = await person(world.p, 'kb-owner@people.test');
  await world.p
    .db('domains')
    .insert({ id: newId(), team_id: owner.teamId, name: RX, status: 'verified', receiving: 'enabled' });
});
test.after.always(async () => {
  await browser?.close();
  await world?.close();
});

/** The page at `path`, once `ready` shows. */
async function open(page: Page, path: string, ready: string) {
  await page.goto(url + path);
  await page.locator(ready).first().waitFor();
}

test.serial('keyboard only: overview, API keys, domains and a domain, suppressions', async (t) => {
  t.timeout(180_000);
  const v = await browse(browser, owner);
  const { page } = v;
  await v.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
  await open(page, '/dashboard/overview', '.stats');
  await keyboardOnly(t, page, 'overview', async () => {
    await tabToName(t, page, 'Range');
    await page.keyboard.press('ArrowDown');
    await page.waitForURL(/range=30d/);
    await page.locator('.stats').waitFor();
  });

  await open(page, '/dashboard/api-keys', '#new-key-form');
  await page.getByText('No API keys yet').waitFor();
  await keyboardOnly(t, page, 'api-keys', async () => {
    await tabToName(t, page, 'Name');
    await page.keyboard.type('Keyboard key');
    await page.keyboard.press('Enter');
    await page.locator('#new-key-token').waitFor();
    await page.getByRole('cell', { name: 'Keyboard key', exact: true }).waitFor();
  });
  await page.reload();
  await page.getByRole('cell', { name: 'Keyboard key', exact: true }).waitFor();
  await keyboardOnly(t, page, 'api-keys (a key listed)', async () => {
    // The confirmation is the page's own dialog, the focus on its Cancel: Tab to Revoke, Enter.
    await tabToName(t, page, 'Revoke Keyboard key');
    await page.keyboard.press('Enter');
    await page.getByRole('dialog', { name: 'Revoke “Keyboard key”?' }).waitFor();
    t.is((await focused(page)).name, 'Cancel', 'the focus on Cancel');
    await tabToName(t, page, 'Revoke');
    await page.keyboard.press('Enter');
    await page.getByText('No API keys yet').waitFor();
  });

  await open(page, '/dashboard/domains', 'table');
  await keyboardOnly(t, page, 'domains', async () => {
    await tabToName(t, page, 'Domain name');
    await page.keyboard.type('kb-shop.test');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'kb-shop.test' }).waitFor();
  });
  await keyboardOnly(t, page, 'domain', async () => {
    const copy = await tabToName(t, page, /^Copy the .* record's value$/);
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: copy.name }).getByText('Copied').waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    t.true((await page.locator('td.value code').allTextContents()).includes(copied), 'a record value copied');
    await tabToName(t, page, 'Verify DNS records', true);
    await page.keyboard.press('Enter');
    await page.getByText('Verification started').waitFor();
  });

  await open(page, '/dashboard/suppressions', '#add-suppression-form');
  await page.getByText('No suppressed addresses').waitFor();
  await keyboardOnly(t, page, 'suppressions', async () => {
    await tabToName(t, page, 'Address to suppress');
    await page.keyboard.type('kb-blocked@people.test');
    await page.keyboard.press('Enter');
    await page.getByRole('cell', { name: 'kb-blocked@people.test', exact: true }).waitFor();
    await tabToName(t, page, 'Remove kb-blocked@people.test');
    await page.keyboard.press('Enter');
    await page.getByText('No suppressed addresses').waitFor();
  });
  t.deepEqual(unexpected(v.errors), []);
  await v.context.close();
});

/**
 * The received message's page with its attachments and its frame's document: only then is the frame a Tab stop (a
 * loaded CI run's walk ended before it).
 */
const messagePageReady = (page: Page) =>
  Promise.all([
    page.locator('.attachments a').waitFor(),
    page.frameLocator('iframe[title="The message\'s HTML"]').locator('body').waitFor(),
  ]);

// The endpoint's first delivery, fanned out once no other transaction holds its event back (a fixed 2 s ran out in CI).
const fannedOut = async (endpointId: string) => {
  await fanOutSettled(world.p.db);
  return world.p.db('webhook_deliveries').where({ endpoint_id: endpointId }).first();
};

test.serial(
  'keyboard only: webhooks, an endpoint and its event, logs and a log, received mail and a message',
  async (t) => {
    t.timeout(180_000);
    const { client } = owner;
    const hook = await client.request('POST', '/webhooks', {
      body: { endpoint: 'https://hooks.example.com/kb', events: ['domain.created', 'domain.deleted'] },
    });
    t.is(hook.status, 201, hook.text);
    t.is((await client.request('POST', '/domains', { body: { name: 'kb-hooks.test' } })).status, 201);
    t.truthy(await fannedOut(hook.body.id), 'the endpoint has its domain.created delivery');
    const key = (await client.request('POST', '/api-keys', { body: { name: 'logs' } })).body.token;
    t.is((await world.p.request('GET', '/domains', { key })).status, 200);
    await world.deliverOne(`orders@${RX}`, {
      from: 'Alice <alice@sender.test>',
      to: `orders@${RX}`,
      subject: 'Order <b>42</b>',
      text: 'Plain words',
      html: '<h1>Hello</h1><p>Your <a href="https://shop.example/orders/42">order</a> is on its way.</p>',
      attachments: [{ filename: 'invoice.pdf', content: PDF, contentType: 'application/pdf' }],
    });

    const v = await browse(browser, owner);
    const { page } = v;
    await whileLoading(page, '/webhooks', async () => {
      await page.goto(`${url}/dashboard/webhooks`);
      await page.getByText('Loading webhook endpoints…').waitFor();
      await look(t, page, 'webhooks-loading');
    });
    await page.locator('table').waitFor();
    await look(t, page, 'webhooks');
    await keyboardOnly(t, page, 'webhooks', async () => {
      await tabToName(t, page, 'Add an endpoint');
      await page.keyboard.press('Enter');
      t.is(
        await page.evaluate(() => document.activeElement?.getAttribute('name')),
        'endpoint',
        'the focus in the new form',
      );
      await page.keyboard.type('https://hooks.example.com/second');
      await tabToName(t, page, 'All domain events');
      await page.keyboard.press('Space');
      await tabToName(t, page, 'Create endpoint');
      await page.keyboard.press('Enter');
      await page.locator('#signing-secret').waitFor();
    });

    await open(page, `/dashboard/webhooks/${hook.body.id}`, 'section[aria-labelledby=events-title] table');
    await keyboardOnly(t, page, 'webhook', async () => {
      await tabToName(t, page, 'Disable');
      await page.keyboard.press('Enter');
      await page.getByText('Disabled: no more deliveries').waitFor();
      await tabToName(t, page, 'Enable', true);
      await page.keyboard.press('Enter');
      await page.getByText('Enabled: new events are delivered again').waitFor();
      await tabToName(t, page, 'domain.created');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'domain.created' }).waitFor();
    });
    await page.locator('pre.code-block').first().waitFor();
    await keyboardOnly(t, page, 'webhook event', async () => {
      await tabToName(t, page, 'Replay');
      await page.keyboard.press('Enter');
      await page.getByText('Replayed').waitFor();
    });

    await open(page, '/dashboard/logs', 'tbody tr');
    await keyboardOnly(t, page, 'logs', async () => {
      await tabToName(t, page, 'Status');
      await page.keyboard.press('ArrowDown');
      await page.waitForURL(/status=2xx/);
      await tabToName(t, page, 'GET /domains');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'GET /domains' }).waitFor();
    });
    await page.locator('pre.code-block').first().waitFor();
    await keyboardOnly(t, page, 'log', async () => {
      await tabToName(t, page, '← Logs');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Logs', exact: true }).waitFor();
    });

    await open(page, '/dashboard/received', 'tbody tr');
    await keyboardOnly(t, page, 'received', async () => {
      await tabToName(t, page, 'Search');
      await page.keyboard.type('order');
      await page.keyboard.press('Enter');
      await page.waitForURL(/q=order/);
      await tabToName(t, page, 'Order <b>42</b>');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Order <b>42</b>' }).waitFor();
    });
    await messagePageReady(page);
    await keyboardOnly(t, page, 'received message', async () => {
      // The confirmation is the page's own dialog: Tab from its Cancel to Delete, Enter.
      await tabToName(t, page, 'Delete');
      await page.keyboard.press('Enter');
      await page.getByRole('dialog', { name: 'Delete this message for good?' }).waitFor();
      await tabToName(t, page, 'Delete');
      await page.keyboard.press('Enter');
      await page.waitForURL(`${url}/dashboard/received`);
      await page.getByText('No mail received yet').waitFor();
    });
    t.deepEqual(unexpected(v.errors), []);
    await v.context.close();
  },
);

test.serial('keyboard only: contacts and a contact, imports and an import', async (t) => {
  t.timeout(180_000);
  const { client } = owner;
  for (const email of ['ann@kb-people.test', 'bob@kb-people.test', 'cy@kb-people.test'])
    t.is((await client.request('POST', '/contacts', { body: { email } })).status, 201);
  t.is((await client.request('POST', '/segments', { body: { name: 'Everyone <b>here</b>' } })).status, 201);
  t.is(
    (await client.request('POST', '/topics', { body: { name: 'News', default_subscription: 'opt_in' } })).status,
    201,
  );
  const v = await browse(browser, owner);
  const { page } = v;

  await open(page, '/dashboard/contacts', '#contacts-table');
  await keyboardOnly(t, page, 'contacts', async () => {
    await tabToName(t, page, 'Search contacts');
    await page.keyboard.type('bob');
    await page.keyboard.press('Enter');
    await page.waitForURL(/search=bob/);
    await page.getByRole('cell', { name: 'bob@kb-people.test' }).waitFor();
    await tabToName(t, page, 'Add a contact', true);
    await page.keyboard.press('Enter');
    await tabToName(t, page, 'Address');
    await page.keyboard.type('dee@kb-people.test');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'dee@kb-people.test' }).waitFor();
  });
  await page.getByRole('heading', { name: 'Topics' }).waitFor();
  await keyboardOnly(t, page, 'contact', async () => {
    await tabToName(t, page, 'Edit');
    await page.keyboard.press('Enter');
    await tabToName(t, page, 'First name');
    await page.keyboard.type('Dee');
    await page.keyboard.press('Enter');
    await page.locator('.facts dd', { hasText: 'Dee' }).first().waitFor();
  });

  const dir = await mkdtemp(path.join(tmpdir(), 'pw-kb-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const csv = path.join(dir, 'people.csv');
  await writeFile(csv, 'email,first_name\neve@kb-people.test,Eve\nfay@kb-people.test,Fay\n');
  await open(page, '/dashboard/contacts/imports', '#import-form');
  // The form's segment and topic choices are in (they load beside the page's own list).
  await page.locator('#import-segments, #import-topics').nth(1).waitFor();
  await keyboardOnly(t, page, 'imports', async () => {
    await chooseFileWithKeys(t, page, 'CSV file', csv);
    await page.locator('#file-size').waitFor();
    await tabToName(t, page, 'Upload and import');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/dashboard\/contacts\/imports\/[0-9a-f-]{36}$/);
  });
  await page.locator('#import-status').waitFor();
  await keyboardOnly(t, page, 'import', async () => {
    await tabToName(t, page, 'Imports');
    await page.keyboard.press('Enter');
    await page.locator('#import-form').waitFor();
  });

  t.deepEqual(unexpected(v.errors), []);
  await v.context.close();
});

test.serial('keyboard only: segments and the filter builder, topics, properties', async (t) => {
  t.timeout(180_000);
  t.is((await owner.client.request('POST', '/segments', { body: { name: 'Kb <b>list</b>' } })).status, 201);
  const v = await browse(browser, owner);
  const { page } = v;
  await whileLoading(page, '/segments', async () => {
    await page.goto(`${url}/dashboard/segments`);
    await page.getByText('Loading segments…').waitFor();
    await look(t, page, 'audience-segments-loading');
  });
  await page.locator('#segments-table').waitFor();
  await look(t, page, 'audience-segments');
  await keyboardOnly(t, page, 'segments', async () => {
    await tabToName(t, page, 'New segment');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${url}/dashboard/segments/new`);
  });
  await page.getByText('No filter: only contacts added by hand').waitFor();
  await keyboardOnly(t, page, 'segment editor', async () => {
    await tabToName(t, page, 'Name');
    await page.keyboard.type('Kb people');
    await tabToName(t, page, 'Add condition');
    await page.keyboard.press('Enter');
    // Address (the first field), "ends with" (two down from "contains"), a value.
    await tabToName(t, page, 'Operator of the condition at filter.all.0');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await tabToName(t, page, 'Value of the condition at filter.all.0');
    await page.keyboard.type('@kb-people.test');
    await page.locator('#live-count', { hasText: 'matches' }).waitFor();
    await tabToName(t, page, 'Create segment');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/dashboard\/segments\/[0-9a-f-]{36}$/);
  });
  const saved = await world.p.db('segments').where({ team_id: owner.teamId, name: 'Kb people' }).first();
  t.deepEqual(saved.filter, { all: [{ field: 'email', operator: 'ends_with', value: '@kb-people.test' }] });
  await page.locator('#live-count', { hasText: 'Members as saved' }).waitFor();
  await keyboardOnly(t, page, 'segment editor (saved)', async () => {
    await tabToName(t, page, 'Search this segment');
    await page.keyboard.type('ann');
    await page.keyboard.press('Enter');
    await page.waitForURL(/search=ann/);
  });

  await open(page, '/dashboard/topics', '#topics-list');
  await keyboardOnly(t, page, 'topics', async () => {
    await tabToName(t, page, 'Name');
    await page.keyboard.type('Offers');
    await tabToName(t, page, 'Create topic');
    await page.keyboard.press('Enter');
    await page.locator('#topics-list .topic-name', { hasText: 'Offers' }).waitFor();
  });

  await open(page, '/dashboard/contact-properties', '#new-property-form');
  await keyboardOnly(t, page, 'contact properties', async () => {
    await tabToName(t, page, 'Key');
    await page.keyboard.type('plan');
    await tabToName(t, page, 'Type');
    await page.keyboard.press('ArrowDown');
    await tabToName(t, page, 'Create property');
    await page.keyboard.press('Enter');
    await page.getByRole('cell', { name: 'plan', exact: true }).waitFor();
  });
  t.is((await world.p.db('contact_properties').where({ team_id: owner.teamId, key: 'plan' }).first()).type, 'number');
  t.deepEqual(unexpected(v.errors), []);
  await v.context.close();
});

test.serial('keyboard only: the templates and broadcasts lists', async (t) => {
  t.timeout(120_000);
  const made = await owner.client.request('POST', '/templates', { body: { name: 'Welcome', html: '<p>Hi</p>' } });
  t.is(made.status, 201, made.text);
  const v = await browse(browser, owner);
  const { page } = v;
  await open(page, '/dashboard/templates', 'table');
  await keyboardOnly(t, page, 'templates', async () => {
    await tabToName(t, page, 'Search templates');
    await page.keyboard.type('welc');
    await tabToName(t, page, /^Duplicate/);
    await page.keyboard.press('Enter');
    await page.getByText('Duplicated “Welcome”.').waitFor();
    await tabToName(t, page, 'Name', true);
    await page.keyboard.type('Receipt');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/dashboard\/templates\/[0-9a-f-]{36}$/);
  });

  await open(page, '/dashboard/broadcasts', 'h1');
  await page.locator('.empty, table').first().waitFor();
  await keyboardOnly(t, page, 'broadcasts', async () => {
    await tabToName(t, page, 'New broadcast');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${url}/dashboard/broadcasts/new`);
  });
  t.deepEqual(unexpected(v.errors), []);
  await v.context.close();
});
