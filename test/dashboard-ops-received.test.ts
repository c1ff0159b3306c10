// Received mail in a real browser against the real api, with mail arriving over SMTP at the real MX and stored by the
// real receive job: the empty list, a message in the list, the api's search, the message's page (facts, its SPF and
// DMARC verdicts from a loopback DNS server, the HTML in a
// sandboxed frame: the message's own page, its inline styles applied, its cid: image shown, its remote image blocked
// unless asked; headers, an attachment and the raw message downloaded through their signed links), a 404, deleting
// (members) and a viewer offered no delete. Screenshots at 1280 and 390 px.
import test from 'ava';
import type { Browser } from 'playwright-core';
import { launchChromium } from './helpers/browser.ts';
import { answerConfirm, buildDashboard } from './helpers/dashboard.ts';
import { PDF, startReceivingWorld, type ReceivingWorld } from './helpers/receiving-world.ts';
import { browse, look, person, unexpected, type Person } from './helpers/dashboard-ops.ts';
import { newId } from '../shared/ids.ts';
import { until } from './helpers/wait.ts';
import { startDnsServer, type DnsServer } from './helpers/dns-server.ts';
import { createAuthenticator } from '../inbound/receive/authenticate.ts';
import { createResolver } from '../shared/dns/resolver.ts';

/** A 2x2 PNG (red), the message's inline image. */
const LOGO = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==',
  'base64',
);

let world: ReceivingWorld;
let dns: DnsServer;
let browser: Browser;
let owner: Person;
let domain: string;

test.before(async () => {
  await buildDashboard();
  // An http public address (cookies without the __Host- prefix, as on loopback); its links name another host,
  // which the dashboard turns into paths of the api it came from.
  // The sender publishes SPF for loopback and a DMARC policy: the receive job's checks pass SPF and DMARC.
  dns = await startDnsServer();
  dns.set('sender.test', 'TXT', ['v=spf1 ip4:127.0.0.1 -all']);
  dns.set('_dmarc.sender.test', 'TXT', ['v=DMARC1; p=reject']);
  const authenticator = createAuthenticator({
    dns: createResolver({ servers: [dns.address], timeoutMs: 1500, tries: 2 }),
    authservId: 'mx.rx-dashboard.test',
  });
  world = await startReceivingWorld({ PUBLIC_BASE_URL: 'http://mail.example-platform.test' }, { authenticator });
  browser = await launchChromium();
  owner = await person(world.p, 'received-owner@people.test');
  domain = 'rx-dashboard.test';
  await world.p.db('domains').insert({
    id: newId(),
    team_id: owner.teamId,
    name: domain,
    status: 'verified',
    receiving: 'enabled',
  });
});
test.after.always(async () => {
  await browser?.close();
  await world?.close();
  await dns?.close();
});

test.serial('the inbox: list, search, a message with its frame, attachment and raw download, delete', async (t) => {
  t.timeout(180_000);
  const url = world.p.url;
  const v = await browse(browser, owner);
  const { page } = v;
  await page.goto(`${url}/dashboard/received`);
  await page.getByText('No mail received yet').waitFor();
  await look(t, page, 'received-empty');

  const id = await world.deliverOne(`orders@${domain}`, {
    from: 'Alice <alice@sender.test>',
    to: `orders@${domain}`,
    subject: 'Order <b>42</b>',
    text: 'Plain words',
    html: [
      '<h1 id="inside">Hello from the inbox</h1><p id="styled" style="color:red">Styled</p>',
      '<img id="logo" src="cid:logo@rx" width="40" height="40" alt="Logo"><img src="https://tracker.example/p.gif">',
    ].join(''),
    attachments: [
      { filename: 'invoice.pdf', content: PDF, contentType: 'application/pdf' },
      { filename: 'logo.png', content: LOGO, contentType: 'image/png', cid: 'logo@rx' },
    ],
  });
  await world.deliverOne(`orders@${domain}`, { to: `orders@${domain}`, subject: 'Another one', text: 'x' });
  await page.reload();
  await page.getByRole('link', { name: 'Order <b>42</b>' }).waitFor();
  await look(t, page, 'received');
  await page.getByLabel('Search').fill('another');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForURL(/q=another/);
  // The list before the search held both, and while the search loads it holds neither: its answer is the other one
  // listed without the order (a timeout here means the api did not search).
  const listed = async (name: string) => page.getByRole('link', { name }).count();
  await until(async () => (await listed('Another one')) === 1 && (await listed('Order <b>42</b>')) === 0, {
    timeoutMs: 30_000,
    what: 'the search answer: "Another one" without the order',
  });
  t.is(await listed('Order <b>42</b>'), 0, 'the api searched');
  await page.getByLabel('Search').fill('nothing like it');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByText('No received message matches').waitFor();

  await page.goto(`${url}/dashboard/received/${id}`);
  t.is(await page.locator('h1').first().textContent(), 'Order <b>42</b>', 'the subject as text');
  const frame = page.frameLocator('iframe[title="The message\'s HTML"]');
  t.is(await frame.locator('#inside').textContent(), 'Hello from the inbox');
  t.is(await page.locator('iframe').getAttribute('sandbox'), '');
  t.true(await frame.locator('#inside').isVisible(), 'the frame renders');
  const verdict = async (method: string) =>
    ((await page.locator(`#authentication li[data-method=${method}]`).textContent()) ?? '').replace(/\s+/g, ' ');
  t.is(await verdict('spf'), 'SPF pass sender.test', "the MX's SPF verdict, about the MAIL FROM's domain");
  t.is(await verdict('dmarc'), 'DMARC pass sender.test');
  t.is(await verdict('dkim'), 'DKIM none', 'an unsigned message');
  t.regex((await page.locator('#authentication').textContent()) ?? '', /checked by mx\.rx-dashboard\.test/);
  const color = await frame.locator('#styled').evaluate((el) => getComputedStyle(el).color);
  t.is(color, 'rgb(255, 0, 0)', "the message's inline style applies");
  await until(() => frame.locator('#logo').evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth === 2), {
    what: "the message's cid: image shown",
  });
  t.false(await page.getByLabel(/Load remote images/).isChecked(), 'remote images stay blocked until asked');
  await page.getByText('header fields').click();
  await page.getByRole('rowheader', { name: 'subject' }).waitFor();
  const attachment = page.getByRole('link', { name: 'invoice.pdf' });
  await attachment.waitFor();
  await look(t, page, 'received-message');

  const [file] = await Promise.all([page.waitForEvent('download'), attachment.click()]);
  t.deepEqual(await readAll(await file.createReadStream()), PDF);
  const [raw] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: 'Download the raw message' }).click(),
  ]);
  t.regex((await readAll(await raw.createReadStream())).toString('latin1'), /^Subject: Order <b>42<\/b>/m);
  // Chromium refuses the image by the policy the frame inherits; it sometimes reports the refusal as a request that
  // failed as `csp`: each one the page asked must have.
  const remote = v.requests.filter((r) => r.startsWith('https://tracker.example'));
  t.deepEqual(
    remote.filter((r) => !v.failed.some((f) => f.url === r && f.error === 'csp')),
    [],
    'the frame loads nothing remote',
  );

  const viewer = await person(world.p, 'received-viewer@people.test', { teamId: owner.teamId, role: 'viewer' });
  const vv = await browse(browser, viewer);
  await vv.page.goto(`${url}/dashboard/received/${id}`);
  await vv.page.getByRole('link', { name: 'Download the raw message' }).waitFor();
  t.is(await vv.page.getByRole('button', { name: 'Delete' }).count(), 0, 'no delete for a viewer');
  await vv.context.close();

  await page.getByRole('button', { name: 'Delete' }).click();
  await answerConfirm(page, 'Delete this message for good?', 'Delete');
  await page.waitForURL(`${url}/dashboard/received`);
  await page.getByRole('link', { name: 'Another one' }).waitFor();
  t.is(await page.getByRole('link', { name: 'Order <b>42</b>' }).count(), 0);
  await page.goto(`${url}/dashboard/received/${id}`);
  await page.getByRole('alert').waitFor();
  await look(t, page, 'received-not-found');
  t.deepEqual(unexpected(v.errors.filter((e) => !/Content Security Policy|tracker\.example/.test(e))), []);
  await v.context.close();
});

test.serial(
  'a message dropped past the daily cap says why it was not kept, and that the MX did not authenticate it',
  async (t) => {
    // The cap is already reached today: the next message is dropped before the receive job authenticates it.
    await world.p.db('teams').where({ id: owner.teamId }).update({ receive_daily_cap: 1 });
    t.teardown(() => world.p.db('teams').where({ id: owner.teamId }).update({ receive_daily_cap: null }));
    const id = await world.deliverOne(`orders@${domain}`, {
      to: `orders@${domain}`,
      subject: 'Over the cap',
      text: 'x',
    });
    t.is((await world.p.db('received_emails').where({ id }).first()).dropped_reason, 'daily_cap');
    const v = await browse(browser, owner);
    await v.page.goto(`${world.p.url}/dashboard/received/${id}`);
    await v.page.locator('#authentication').waitFor();
    t.is((await v.page.locator('#authentication').textContent())?.trim(), 'Not checked by mx.rx-dashboard.test');
    t.is(await v.page.locator('#authentication li').count(), 0, 'no verdicts listed');
    t.regex(
      (await v.page.locator('#dropped').textContent()) ?? '',
      /not kept It came past the team's daily cap of received messages\. Its body and attachments were dropped\./,
      'why there is no body',
    );
    await v.page.getByText('Its body was not kept.').waitFor();
    await look(t, v.page, 'received-not-checked');
    await v.page.goto(`${world.p.url}/dashboard/received`);
    const row = v.page.getByRole('row').filter({ has: v.page.getByRole('link', { name: 'Over the cap' }) });
    t.is((await row.locator('.badge').textContent())?.trim(), 'not kept', 'the list says so too');
    t.is(
      await v.page
        .getByRole('row')
        .filter({ has: v.page.getByRole('link', { name: 'Another one' }) })
        .locator('.badge')
        .count(),
      0,
    );
    await look(t, v.page, 'received-list-dropped');
    t.deepEqual(unexpected(v.errors), []);
    await v.context.close();
  },
);

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks);
}
