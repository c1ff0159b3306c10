// The dashboard's operations pages in a real browser (Debian's headless Chromium) against the real api, mta and
// worker: the overview's charts of real sends (to the simulator's delivered, bounced and complained addresses), in
// the browser's timezone; webhooks (create with the secret shown once, a signed delivery to a loopback receiver,
// attempts, replay, disable parks, deliver parked, edit, rotate, delete); request logs with filters and one log's
// bodies; a viewer sees no action. Every page is checked by axe-core and photographed at 1280 and 390 pixels.
import test from 'ava';
import type { Browser } from 'playwright-core';
import { Resend } from 'resend';
import { launchChromium } from './helpers/browser.ts';
import { answerConfirm, buildDashboard } from './helpers/dashboard.ts';
import { PEOPLE, startAccountsWorld, type AccountsWorld } from './helpers/accounts.ts';
import { startEntry, type EntryProcess } from './helpers/processes.ts';
import { startReceiver } from './helpers/webhook-receiver.ts';
import { verifyAsCustomers } from './helpers/webhook-world.ts';
import { until } from './helpers/wait.ts';
import { browse, look, person, unexpected, type Person } from './helpers/dashboard-ops.ts';

let world: AccountsWorld;
let worker: EntryProcess;
let browser: Browser;
let owner: Person;
let key: string;
let resend: Resend;
let from: string;
/** Webhook receivers, closed after the tests even when one fails (an open server would keep the test alive). */
const receivers: { close(): Promise<void> }[] = [];

test.before(async () => {
  await buildDashboard();
  world = await startAccountsWorld({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
  worker = startEntry('worker/main.ts', world.w.p.config);
  await worker.logged('worker.started', 120_000);
  browser = await launchChromium();
  owner = await person(world.w.p, `ops-owner@${PEOPLE}`);
  const made = await owner.client.request('POST', '/api-keys', { body: { name: 'ops', permission: 'full_access' } });
  if (made.status !== 201) throw new Error(`api key: ${made.status} ${made.text}`);
  key = made.body.token;
  resend = new Resend(key, { baseUrl: world.w.p.url } as never);
  from = `ops@${(await resend.domains.list()).data!.data[0].name}`;
});
test.after.always(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await browser?.close();
  await worker?.stop();
  await world?.close();
});

const url = () => world.w.p.url;

async function send(to: string, subject = 'Ops <b>dashboard</b>'): Promise<string> {
  const sent = await resend.emails.send({ from, to, subject, html: '<p>Hello</p>' });
  if (sent.error) throw new Error(JSON.stringify(sent.error));
  return sent.data!.id;
}

async function settled(id: string, event: string) {
  await until(async () => (await world.w.p.request('GET', `/emails/${id}`, { key })).body.last_event === event, {
    timeoutMs: 60_000,
    intervalMs: 300,
    what: `email ${id} ${event}`,
  });
}

test.serial('the overview is the landing page and charts real sends in the browser timezone', async (t) => {
  t.timeout(240_000);
  const v = await browse(browser, owner, 'Asia/Tokyo');
  const { page } = v;
  await page.goto(`${url()}/`);
  await page.waitForURL(`${url()}/dashboard/overview`);
  await page.getByText('Nothing sent in this range yet').waitFor();
  await look(t, page, 'overview-empty');
  const asked = v.requests.find((r) => r.includes('/emails/metrics'));
  t.truthy(asked);
  t.is(new URL(asked!).searchParams.get('timezone'), 'Asia/Tokyo', 'the browser timezone is asked');
  t.is(await page.locator('.muted', { hasText: 'Times in Asia/Tokyo' }).count(), 1);

  const ids = [
    await send(world.w.sim('delivered')),
    await send(world.w.sim('bounced')),
    await send(world.w.sim('complained')),
  ];
  await settled(ids[0], 'delivered');
  await settled(ids[1], 'bounced');
  await settled(ids[2], 'complained');
  const stat = (m: string) => page.locator(`.stat[data-metric=${m}] dd`);
  await until(
    async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await stat('sent').waitFor();
      return (await stat('complained').textContent()) === '1' && (await stat('bounced').textContent()) === '1';
    },
    { timeoutMs: 60_000, intervalMs: 1000, what: 'the counts rolled up' },
  );
  t.is(await stat('sent').textContent(), '3');
  t.is(await stat('delivered').textContent(), '2', 'the delivered and the complained address both took it');
  t.is(await page.locator('svg[role=img] title').first().textContent(), 'Delivery over time');
  t.is(await page.locator('svg[role=img]').count(), 2, 'the delivery and engagement charts');
  // Seven days, the last one today in Tokyo; its row of the table alternative carries the counts.
  await page.getByText('The numbers as a table').first().click();
  const rows = page.locator('.chart-table').first().locator('tbody tr');
  t.is(await rows.count(), 7);
  const today = new Date().toLocaleDateString('en-US', { timeZone: 'Asia/Tokyo', month: 'short', day: 'numeric' });
  t.is(await rows.last().locator('th').textContent(), today);
  t.deepEqual(await rows.last().locator('td').allTextContents(), ['3', '2', '1', '1']);
  const xLabels = () => page.locator('svg[role=img]').first().locator('text.x-label').allTextContents();
  t.deepEqual(await xLabels(), await rows.locator('th').allTextContents(), 'every day of the week labelled');
  await look(t, page, 'overview');

  await page.locator('.toolbar select').selectOption('24h');
  await page.waitForURL(/range=24h/);
  const hours = page.locator('.chart-table').first().locator('tbody tr');
  await until(async () => (await hours.count()) === 24, { timeoutMs: 30_000, what: '24 hourly periods' });
  t.is(await hours.count(), 24, 'hourly');
  // Too many hours to label each: every fourth from the first, and the last.
  const periods = await hours.locator('th').allTextContents();
  t.deepEqual(
    (await xLabels()).map((l) => periods.indexOf(l)),
    [0, 4, 8, 12, 16, 20, 23],
  );
  t.deepEqual(unexpected(v.errors), []);
  await v.context.close();
});

test.serial(
  'webhooks: create, a signed delivery, attempts, replay, park, deliver parked, edit, rotate, delete',
  async (t) => {
    t.timeout(300_000);
    const receiver = await startReceiver([200]);
    receivers.push(receiver);
    const v = await browse(browser, owner);
    const { page } = v;
    await page.goto(`${url()}/dashboard/webhooks`);
    await page.getByText('No webhook endpoints yet').waitFor();
    await look(t, page, 'webhooks-empty');
    await page.getByRole('button', { name: 'Add an endpoint' }).click();
    const form = page.locator('#new-webhook-form');
    await form.getByLabel('Endpoint URL').fill('ftp://example.com/<b>hook</b>');
    await form.getByRole('button', { name: 'Create endpoint' }).click();
    await form.getByRole('alert').waitFor();
    t.regex((await form.getByRole('alert').textContent()) ?? '', /endpoint/, 'the refused field is named');
    await look(t, page, 'webhook-new-error');
    await form.getByLabel('Endpoint URL').fill(receiver.url);
    await form.getByLabel('All email events').check();
    await form.getByLabel('email.opened').uncheck();
    await form.getByRole('button', { name: 'Create endpoint' }).click();
    const secret = ((await page.locator('#signing-secret').textContent()) ?? '').trim();
    t.regex(secret, /^whsec_/);
    await look(t, page, 'webhook-secret-once');
    await page.getByRole('link', { name: 'Open the new endpoint' }).click();
    await page.getByRole('heading', { name: receiver.url }).waitFor();
    t.false((await page.content()).includes(secret), 'the secret is not shown again');
    t.is(await page.locator('#masked-secret').textContent(), `••••••••${secret.slice(-4)}`, 'only its last four');
    t.notRegex((await page.locator('.facts').textContent()) ?? '', /email\.opened/);

    const id = await send(world.w.sim('delivered'));
    await settled(id, 'delivered');
    await until(() => receiver.received.length >= 2, { timeoutMs: 60_000, what: 'email.sent and email.delivered' });
    verifyAsCustomers(t, secret, receiver.received[0]);
    await until(
      async () => {
        await page.getByRole('button', { name: 'Refresh' }).first().click();
        await page.locator('#events-title').waitFor();
        return (await page.locator('section[aria-labelledby=events-title] .badge.success').count()) >= 2;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'the events listed as success' },
    );
    await look(t, page, 'webhook');
    await page.getByRole('link', { name: 'email.delivered' }).click();
    await page.getByRole('heading', { name: 'email.delivered' }).waitFor();
    await page.getByText('HTTP 200').waitFor();
    t.regex((await page.locator('pre.code-block').first().textContent()) ?? '', new RegExp(id), 'the payload');
    await look(t, page, 'webhook-event');
    const before = receiver.received.length;
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.getByText('Replayed').waitFor();
    await until(() => receiver.received.length > before, { timeoutMs: 30_000, what: 'the replay' });
    t.is(JSON.parse(receiver.received.at(-1)!.body).type, 'email.delivered');

    await page.getByRole('link', { name: '← The endpoint' }).click();
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByText('Disabled: no more deliveries').waitFor();
    const seen = receiver.received.length;
    await settled(await send(world.w.sim('delivered')), 'delivered');
    await until(
      async () => {
        await page.reload();
        await page.locator('#parked-title').waitFor();
        await page.locator('section[aria-labelledby=parked-title] .loading').waitFor({ state: 'detached' });
        return (await page.locator('section[aria-labelledby=parked-title] tbody tr').count()) >= 2;
      },
      { timeoutMs: 30_000, intervalMs: 1000, what: 'the events parked' },
    );
    t.is(receiver.received.length, seen, 'nothing sent while disabled');
    t.is(await page.getByText('Enable the endpoint to deliver its parked events.').count(), 1);
    await look(t, page, 'webhook-parked');
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('button', { name: 'Deliver parked events' }).click();
    await page.getByText(/handed back to delivery/).waitFor();
    await until(() => receiver.received.length >= seen + 2, { timeoutMs: 30_000, what: 'the parked events sent' });

    await page.getByRole('button', { name: 'Edit' }).click();
    await page.locator('#edit-webhook-form').getByLabel('All domain events').check();
    await page.locator('#edit-webhook-form').getByRole('button', { name: 'Save' }).click();
    await page.locator('.facts', { hasText: 'domain.deleted' }).waitFor();
    await page.getByRole('button', { name: 'Rotate signing secret' }).click();
    await answerConfirm(page, 'Rotate the signing secret?', 'Rotate');
    const rotated = ((await page.locator('#signing-secret').textContent()) ?? '').trim();
    t.regex(rotated, /^whsec_/);
    t.not(rotated, secret);
    await page.getByRole('button', { name: 'Delete' }).click();
    await answerConfirm(page, 'Delete this endpoint?', 'Delete');
    await page.waitForURL(`${url()}/dashboard/webhooks`);
    await page.getByText('No webhook endpoints yet').waitFor();
    await page.goto(`${url()}/dashboard/webhooks/00000000-0000-4000-8000-000000000000`);
    await page.getByRole('alert').waitFor();
    await look(t, page, 'webhook-not-found');
    t.deepEqual(unexpected(v.errors), []);
    await v.context.close();
  },
);

test.serial('logs: the requests of the team keys, filtered, and one request with its bodies', async (t) => {
  t.timeout(120_000);
  const refused = await world.w.p.request('POST', '/emails', { key, body: { from, to: 'nobody', subject: 'x' } });
  t.is(refused.status, 422);
  const v = await browse(browser, owner);
  const { page } = v;
  await page.goto(`${url()}/dashboard/logs`);
  const posts = page.getByRole('link', { name: 'POST /emails' });
  await posts.first().waitFor();
  await look(t, page, 'logs');
  await page.getByLabel('Status').selectOption('4xx');
  await page.waitForURL(/status=4xx/);
  await until(async () => (await posts.count()) === 1, { timeoutMs: 10_000, what: 'only the refused send listed' });
  for (const status of await page.locator('tbody .badge').allTextContents()) t.regex(status, /^4\d\d$/, 'only 4xx');
  await page.getByLabel('Method').selectOption('DELETE');
  await page.getByText('No request on this page matches the filters.').waitFor();
  await page.getByLabel('Method').selectOption('POST');
  await posts.click();
  await page.getByRole('heading', { name: 'POST /emails' }).waitFor();
  t.is(await page.locator('.facts .badge').textContent(), '422');
  const [request, response] = await page.locator('pre.code-block').allTextContents();
  t.regex(request, /"to": "nobody"/);
  t.regex(response, /validation_error/);
  await look(t, page, 'log');
  await page.goto(`${url()}/dashboard/logs/00000000-0000-4000-8000-000000000000`);
  await page.getByRole('alert').waitFor();
  t.deepEqual(unexpected(v.errors), []);
  await v.context.close();
});

test.serial('a viewer reads webhooks and logs but is offered no action', async (t) => {
  t.timeout(120_000);
  const hook = await owner.client.request('POST', '/webhooks', {
    body: { endpoint: 'https://hooks.example.com/in', events: ['email.sent'] },
  });
  t.is(hook.status, 201, hook.text);
  const viewer = await person(world.w.p, `ops-viewer@${PEOPLE}`, { teamId: owner.teamId, role: 'viewer' });
  const v = await browse(browser, viewer);
  const { page } = v;
  await page.goto(`${url()}/dashboard/webhooks`);
  await page.getByRole('link', { name: 'https://hooks.example.com/in' }).click();
  await page.getByRole('heading', { name: 'https://hooks.example.com/in' }).waitFor();
  await page.locator('#events-title').waitFor();
  for (const action of ['Edit', 'Disable', 'Rotate signing secret', 'Delete'])
    t.is(await page.getByRole('button', { name: action }).count(), 0, `no ${action} for a viewer`);
  await page.goto(`${url()}/dashboard/webhooks`);
  await page.locator('table').waitFor();
  t.is(await page.getByRole('button', { name: 'Add an endpoint' }).count(), 0);
  // The api refuses the viewer regardless of what the page shows.
  const refused = await viewer.client.request('DELETE', `/webhooks/${hook.body.id}`);
  t.is(refused.status, 403, refused.text);
  await page.goto(`${url()}/dashboard/overview`);
  await page.locator('.stat').first().waitFor();
  await look(t, page, 'overview-viewer');
  t.deepEqual(unexpected(v.errors), []);
  await v.context.close();
});
