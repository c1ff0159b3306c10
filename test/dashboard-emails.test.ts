// The Emails pages in a real browser (Debian's headless Chromium) against the real api and mta (issue #22): a member
// signs in, sends from the dashboard's form (a refusal first, shown with its field path) to the simulator, finds the
// email by the api's search (the search in the URL), opens it and watches the timeline reach `delivered` without
// reloading, times in the browser's timezone; a send to the simulator's bounced, complained and suppressed addresses
// shows each recipient's own state from the email's events; a viewer is offered no send and the api refuses theirs;
// answers read on either side of a delivery (the email before it, its events after) are followed until they agree,
// and a follow that fails keeps the email on screen with a notice and goes on.
// Every page is checked by axe-core and photographed at 1280 and 390 pixels.
import test, { type ExecutionContext } from 'ava';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, DESKTOP } from './helpers/browser.ts';
import { buildDashboard, look, signInThroughPage } from './helpers/dashboard.ts';
import { PEOPLE, startAccountsWorld, type AccountsWorld } from './helpers/accounts.ts';
import { browse, person, PASSWORD, type Person } from './helpers/dashboard-ops.ts';
import { until } from './helpers/wait.ts';
import { inTurns, RESTARTING } from './helpers/route-turns.ts';

let world: AccountsWorld;
let browser: Browser;
let owner: Person;
const OWNER = `emails-owner@${PEOPLE}`;
const ZONE = 'America/New_York';

test.before(async () => {
  await buildDashboard();
  world = await startAccountsWorld();
  browser = await launchChromium();
  owner = await person(world.w.p, OWNER);
});
test.after.always(async () => {
  await browser?.close();
  await world?.close();
});

const url = () => world.w.p.url;
const sim = (local: string) => world.w.sim(local);

/** Console errors but the expected refusals (the refused send). */
const unexpected = (errors: string[]) => errors.filter((e) => !/status of (401|422)/.test(e));

/** The time as the page writes it (Intl, medium date and time) in the browser's zone. */
const shown = (iso: string) =>
  new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'medium', timeZone: ZONE }).format(new Date(iso));

/** Fills the send form and sends it. */
async function compose(page: Page, o: { to: string; subject: string; body: string; html?: boolean; name?: string }) {
  const form = page.locator('#send-email-form');
  if (o.name !== undefined) await form.getByLabel('Name (optional)').fill(o.name);
  await form.getByLabel('To').fill(o.to);
  await form.getByLabel('Subject').fill(o.subject);
  await form.getByLabel(o.html ? 'HTML' : 'Text', { exact: true }).check();
  await form.locator('textarea[name=body]').fill(o.body);
  await form.getByRole('button', { name: 'Send' }).click();
}

/** Sends from the form (opened first) and answers the new email's id from the "Sent" notice. */
async function sendFromForm(page: Page, o: Parameters<typeof compose>[1]): Promise<string> {
  await page.getByRole('button', { name: 'Send an email' }).click();
  await compose(page, o);
  const link = page.getByRole('status').getByRole('link', { name: 'Follow its delivery' });
  await link.waitFor();
  return ((await link.getAttribute('href')) ?? '').split('/').pop()!;
}

/** The state badge of a recipient's row on the email page. */
const stateOf = (page: Page, address: string) =>
  page.locator('#recipients tr', { hasText: address }).locator('.badge').textContent({ timeout: 60_000 });

test.serial('send from the form, search through the api, open the email and watch it reach delivered', async (t) => {
  t.timeout(300_000);
  const context = await browser.newContext({ viewport: DESKTOP, timezoneId: ZONE, locale: 'en-US' });
  const page = await context.newPage();
  const errors: string[] = [];
  const asked: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (err) => errors.push(String(err)));
  page.on('request', (r) => asked.push(r.url()));
  await signInThroughPage(page, url(), OWNER, PASSWORD, '/dashboard/emails');
  await page.getByText('No emails yet').waitFor();
  await look(t, page, 'emails-empty-member');

  // The form offers the team's domains that may send: here the managed one, made with the team.
  await page.getByRole('button', { name: 'Send an email' }).click();
  const form = page.locator('#send-email-form');
  await form.getByLabel('Domain').waitFor();
  const domains = (await owner.client.request('GET', '/domains')).body.data as { name: string; managed: boolean }[];
  const managed = domains.find((d) => d.managed)!.name;
  t.deepEqual(await form.getByLabel('Domain').locator('option').allTextContents(), [`${managed} (managed)`]);
  await look(t, page, 'email-send-form');

  // A refusal: the api's message and the field's path; what was typed stays.
  await compose(page, { to: `${sim('delivered')}, not an address`, subject: 'Dashboard <b>hello</b>', body: 'x' });
  const alert = form.getByRole('alert');
  await alert.waitFor();
  t.regex((await alert.locator('li code').first().textContent()) ?? '', /^to\.1$/, 'the refused field by its path');
  t.regex((await alert.textContent()) ?? '', /not an address/);
  t.is(await form.getByLabel('Subject').inputValue(), 'Dashboard <b>hello</b>', 'the form keeps what was typed');
  await look(t, page, 'email-send-error');

  await form.getByLabel('To').fill(sim('delivered'));
  await form.getByLabel('Name (optional)').fill('Dash <Board>');
  await form.getByLabel('HTML', { exact: true }).check();
  await form.locator('textarea[name=body]').fill('<p id="inside">Hi from the dashboard</p>');
  await form.getByRole('button', { name: 'Send' }).click();
  const sent = page.getByRole('status').getByRole('link', { name: 'Follow its delivery' });
  await sent.waitFor();
  const id = ((await sent.getAttribute('href')) ?? '').split('/').pop()!;
  const email = (await owner.client.request('GET', `/emails/${id}`)).body;
  t.like(email, {
    subject: 'Dashboard <b>hello</b>',
    to: [sim('delivered')],
    from: `"Dash <Board>" <hello@${managed}>`,
  });
  t.is(email.html, '<p id="inside">Hi from the dashboard</p>');
  const other = await sendFromForm(page, { to: sim('delivered+other'), subject: 'Another one', body: 'Plain text' });
  await page.getByRole('link', { name: 'Another one' }).waitFor();
  t.is(await page.locator('main tbody tr').count(), 2);
  await look(t, page, 'emails-sent-from-form');

  // The search goes to the api (any case), and is in the URL: a link that opens the same list.
  await page.getByLabel('Search emails').fill('DASHBOARD <B>');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.waitForURL(/search=DASHBOARD/);
  await page.getByRole('link', { name: 'Another one' }).waitFor({ state: 'detached' });
  await page.getByRole('link', { name: 'Dashboard <b>hello</b>' }).waitFor();
  t.is(await page.locator('main tbody tr').count(), 1);
  t.true(
    asked.some((a) => new URL(a).pathname === '/emails' && new URL(a).searchParams.get('search') === 'DASHBOARD <B>'),
    'GET /emails?search=',
  );
  await look(t, page, 'emails-search');
  await page.goto(`${url()}/dashboard/emails?search=${encodeURIComponent('delivered+other')}`);
  await page.getByRole('link', { name: 'Another one' }).waitFor();
  t.is(await page.locator('main tbody tr').count(), 1, 'a recipient found; the shared link searches');
  t.is(await page.getByLabel('Search emails').inputValue(), 'delivered+other');
  await page.getByLabel('Search emails').fill('nothing like it');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.getByText('No email’s subject, sender or recipient contains “nothing like it”').waitFor();
  await look(t, page, 'emails-search-empty');

  await page.goto(`${url()}/dashboard/emails?search=hello`);
  await page.getByRole('link', { name: 'Dashboard <b>hello</b>' }).click();
  await page.waitForURL(`${url()}/dashboard/emails/${id}`);
  await delivered(t, page, id);
  t.truthy(other);
  t.deepEqual(unexpected(errors), []);
  await context.close();
});

/** The email page follows the delivery without a reload: the recipient and the timeline reach `delivered`. */
async function delivered(t: ExecutionContext, page: Page, id: string) {
  // The URL changes first; the heading follows once the email is loaded.
  await page.locator('h1', { hasText: 'hello' }).waitFor();
  t.is(await page.locator('h1').textContent(), 'Dashboard <b>hello</b>', 'the subject as text');
  const frame = page.frameLocator('iframe[title="The email\'s HTML"]');
  t.is(await frame.locator('#inside').textContent(), 'Hi from the dashboard');
  await page.locator('.timeline [data-event="email.delivered"]').waitFor({ timeout: 60_000 });
  t.is(await stateOf(page, sim('delivered')), 'delivered');
  const types = await page.locator('.timeline li[data-event]').evaluateAll((li) => li.map((l) => l.dataset.event));
  t.deepEqual(types, ['email.sent', 'email.delivered'], 'the events, oldest first');
  // Times in the browser's zone (America/New_York), as the api's instant says.
  const events = (await owner.client.request('GET', `/emails/${id}/events`)).body.data as {
    type: string;
    created_at: string;
  }[];
  const at = events.find((e) => e.type === 'email.delivered')!.created_at;
  const time = page.locator('.timeline [data-event="email.delivered"] time');
  t.is(await time.getAttribute('datetime'), at);
  t.is(await time.textContent(), shown(at));
  t.is(
    await page
      .locator('#recipients tr', { hasText: sim('delivered') })
      .locator('time')
      .textContent(),
    shown(at),
  );
  // The simulator answers without a connection: an attempt with no transcript.
  const attempt = (await page.locator('.timeline li.attempt').first().textContent()) ?? '';
  t.regex(attempt, /delivered delivery attempt at \S+ \(no connection\)/);
  await page.getByText('following its delivery').waitFor({ state: 'detached' });
  await look(t, page, 'email-delivered');
}

test.serial('each recipient its own state from the events: bounced, complained, suppressed, delivered', async (t) => {
  t.timeout(240_000);
  const v = await browse(browser, owner, ZONE);
  const { page } = v;
  await page.goto(`${url()}/dashboard/emails`);
  await page.getByRole('link', { name: 'Another one' }).waitFor();
  const id = await sendFromForm(page, {
    to: `${sim('bounced')}, ${sim('complained')}, ${sim('delivered+fine')}, ${sim('suppressed')}`,
    subject: 'Mixed fortunes',
    body: 'Hello all',
  });
  await page.getByRole('status').getByRole('link', { name: 'Follow its delivery' }).click();
  await page.waitForURL(`${url()}/dashboard/emails/${id}`);
  await page.locator('.timeline [data-event="email.complained"]').waitFor({ timeout: 60_000 });
  t.is(await stateOf(page, sim('bounced')), 'bounced');
  t.is(await stateOf(page, sim('complained')), 'complained', 'a complaint after the delivery replaces it');
  t.is(await stateOf(page, sim('delivered+fine')), 'delivered');
  t.is(await stateOf(page, sim('suppressed')), 'suppressed');
  const why = await page
    .locator('#recipients tr', { hasText: sim('bounced') })
    .locator('td')
    .last()
    .textContent();
  t.regex(why ?? '', /^Permanent General: /, 'why it bounced, as the event recorded it');
  const bounced = page.locator('.timeline [data-event="email.bounced"]');
  t.regex((await bounced.textContent()) ?? '', new RegExp(`bounced ${sim('bounced').replace(/[.+]/g, '\\$&')}`));
  // The recipients' stored states agree; the complaint is an event after the delivery (the row stays delivered).
  const rows: { address: string; status: string }[] = await world.w.p
    .db('email_recipients')
    .where({ email_id: id })
    .select('address', 'status');
  t.deepEqual(
    rows.map((r) => [r.address, r.status]).sort(),
    [
      [sim('bounced'), 'bounced'],
      [sim('complained'), 'delivered'],
      [sim('delivered+fine'), 'delivered'],
      [sim('suppressed'), 'suppressed'],
    ].sort(),
  );
  await look(t, page, 'email-recipients');
  t.deepEqual(unexpected(v.errors), []);
  await v.context.close();
});

test.serial('a viewer reads and searches but is offered no send; the api refuses theirs', async (t) => {
  t.timeout(120_000);
  const viewer = await person(world.w.p, `emails-viewer@${PEOPLE}`, { teamId: owner.teamId, role: 'viewer' });
  const v = await browse(browser, viewer);
  const { page } = v;
  await page.goto(`${url()}/dashboard/emails?search=fortunes`);
  await page.getByRole('link', { name: 'Mixed fortunes' }).waitFor();
  t.is(await page.getByRole('button', { name: 'Send an email' }).count(), 0, 'no send for a viewer');
  t.is(await page.locator('#send-email-form').count(), 0);
  await look(t, page, 'emails-viewer');
  const managed = (await viewer.client.request('GET', '/domains')).body.data.find(
    (d: { managed: boolean }) => d.managed,
  );
  const refused = await viewer.client.request('POST', '/emails', {
    body: { from: `hello@${managed.name}`, to: sim('delivered'), subject: 'No', text: 'x' },
  });
  t.is(refused.status, 403, refused.text);
  await v.context.close();
});

/** An email sent through the api to the simulator, once delivered: its id. */
async function deliveredEmail(t: ExecutionContext, to: string, subject: string): Promise<string> {
  const managed = (await owner.client.request('GET', '/domains')).body.data.find(
    (d: { managed: boolean }) => d.managed,
  );
  const sent = await owner.client.request('POST', '/emails', {
    body: { from: `hello@${managed.name}`, to, subject, text: 'x' },
  });
  t.is(sent.status, 200, sent.text);
  const id: string = sent.body.id;
  await until(async () => (await owner.client.request('GET', `/emails/${id}`)).body.last_event === 'delivered', {
    what: 'the email delivered',
    timeoutMs: 60_000,
  });
  return id;
}

test.serial(
  'answers read on either side of the delivery: the page follows until the email and its events agree',
  async (t) => {
    t.timeout(120_000);
    const id = await deliveredEmail(t, sim('delivered+torn'), 'Read at two moments');
    const v = await browse(browser, owner, ZONE);
    const { page } = v;
    // As three reads straddling the delivery's commit answer: the email's first answer from before it (`sent`), the
    // attempts' first two from before it (none yet), the events' from after it (delivered).
    const email = inTurns([(b) => ({ ...b, last_event: 'sent' })]);
    const none = (b: Record<string, unknown>) => ({ ...b, data: [], has_more: false });
    const attempts = inTurns([none, none]);
    await page.route((u) => u.pathname === `/emails/${id}`, email.handler);
    await page.route((u) => u.pathname === `/emails/${id}/attempts`, attempts.handler);
    await page.goto(`${url()}/dashboard/emails/${id}`);
    await page.locator('.timeline [data-event="email.delivered"]').waitFor({ timeout: 30_000 });
    // The email's own answer said it was on its way: the page asked again, and shows it delivered.
    await page.locator('dl.facts .badge.delivered').waitFor({ timeout: 30_000 });
    await page.getByText('following its delivery').waitFor({ state: 'detached' });
    // The poll that ended the following still had no attempt: the page asked for the attempts once more.
    await page.locator('.timeline li.attempt').first().waitFor({ timeout: 30_000 });
    t.true(email.asked() > 1 && attempts.asked() > 2, 'every stale answer was given, and asked past');
    t.deepEqual(unexpected(v.errors), []);
    await v.context.close();
  },
);

test.serial('a follow that fails keeps the email on screen, says so, and goes on following', async (t) => {
  t.timeout(120_000);
  const id = await deliveredEmail(t, sim('delivered+outage'), 'Followed through an outage');
  const v = await browse(browser, owner, ZONE);
  const { page } = v;
  // The first answer from before the delivery (so the page follows), the second a restarting api's 503.
  const email = inTurns([(b) => ({ ...b, last_event: 'sent' }), 'restarting']);
  await page.route((u) => u.pathname === `/emails/${id}`, email.handler);
  await page.goto(`${url()}/dashboard/emails/${id}`);
  const stale = page.locator('.stale', { hasText: `Could not refresh the email: ${RESTARTING}` });
  await stale.waitFor({ timeout: 30_000 });
  t.is(await page.locator('h1').textContent(), 'Followed through an outage', 'the email stays on screen');
  t.is(await page.locator('main .error').count(), 0, 'no error in its place');
  await look(t, page, 'email-refresh-failed');
  await page.locator('dl.facts .badge.delivered').waitFor({ timeout: 30_000 });
  t.is(await stale.count(), 0, 'the notice goes with the next answer');
  t.true(email.asked() >= 3);
  t.deepEqual(
    unexpected(v.errors).filter((e) => !/status of 503/.test(e)),
    [],
  );
  await v.context.close();
});
