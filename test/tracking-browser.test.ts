// Tracking and share links in a real browser: Debian's headless Chromium (never a downloaded one), every `.test`
// name mapped to loopback. A tracked copy as a mail client shows it (the pixel loads, the link is clicked and lands on
// the page the email linked to, through the tracking listener); the share page of the same email (rendered in its
// sandboxed frame, no script running, no tracking fired, links opening the original URL); its expired and tampered
// links. Screenshots are written to a temporary directory (named in the log) for a person to look at.
import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { launchChromium } from './helpers/browser.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { linkKey, nowSeconds, sealLink } from '../shared/links/signed.ts';
import { BROWSER, htmlOf, startTrackingWorld, trackedSender, type TrackingWorld } from './helpers/tracking.ts';
import { until } from './helpers/wait.ts';

let world: TrackingWorld;
let browser: Browser;
let landing: http.Server;
let landingPort: number;
let shots: string;
const landed: string[] = [];

test.before(async () => {
  world = await startTrackingWorld();
  landing = http.createServer((req, res) => {
    landed.push(`${req.headers.host}${req.url}`);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Shop</title><h1>Landing page</h1><p>You followed the link.</p>');
  });
  await new Promise<void>((resolve) => landing.listen(0, '127.0.0.1', resolve));
  landingPort = (landing.address() as AddressInfo).port;
  browser = await launchChromium(['--host-resolver-rules=MAP *.test 127.0.0.1']);
  shots = await mkdtemp(path.join(tmpdir(), 'postwerk-tracking-browser-'));
});
test.after.always(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (landing ? landing.close(() => resolve()) : resolve()));
  await world?.close();
});

/** A person's browser (a Chrome user agent, not HeadlessChrome's); a mail client runs no script of a message. */
const newContext = (o: { javaScriptEnabled?: boolean } = {}): Promise<BrowserContext> =>
  browser.newContext({ viewport: { width: 900, height: 700 }, deviceScaleFactor: 1, userAgent: BROWSER, ...o });

function emailHtml(): string {
  return `<!doctype html><html><head><style>body{font-family:sans-serif;padding:24px}a.btn{display:inline-block;padding:10px 18px;background:#0b5fff;color:#fff;text-decoration:none;border-radius:6px}</style></head>
<body><h1>Spring sale</h1><p>Everything half price until Sunday.</p>
<p><a id="go" class="btn" href="http://shop.browser.test:${landingPort}/landing?x=1&amp;y=2">Shop now</a></p>
<p><img alt="a red square" width="40" height="40" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="></p>
<script>document.body.innerHTML = 'PWNED';</script><img src="x" onerror="document.body.innerHTML='PWNED'">
<p><a href="http://shop.browser.test:${landingPort}/unsubscribe">Unsubscribe</a></p></body></html>`;
}

async function sendTracked(to: string) {
  const { w } = world;
  w.mx('browser-inbox.test');
  const sender = await trackedSender(w, `browser-${to.split('@')[0]}.test`);
  const id = await sender.send({ to, subject: 'Spring sale', html: emailHtml() });
  await processDelivery(w.deps, id);
  return { sender, id, copy: await htmlOf(w.sink.deliveredTo(to)[0].raw) };
}

test('a tracked copy in Chromium: the pixel loads, the tracked link lands on the page the email linked to', async (t) => {
  const { w, listener } = world;
  const { sender, id, copy } = await sendTracked('ann@browser-inbox.test');
  const context = await newContext({ javaScriptEnabled: false });
  t.teardown(() => context.close());
  const page = await context.newPage();
  const pixel = page.waitForResponse((r) => r.url().includes('/o/'));
  await page.setContent(copy.html);
  t.is((await pixel).status(), 200);
  t.true((await pixel).url().startsWith(`http://${sender.trackingHost}:${listener.port}/o/`));
  await page.screenshot({ path: path.join(shots, 'tracked-copy.png') });
  await Promise.all([page.waitForURL(/\/landing/), page.click('#go')]);
  t.is(page.url(), `http://shop.browser.test:${landingPort}/landing?x=1&y=2`);
  t.is(await page.locator('h1').textContent(), 'Landing page');
  await page.screenshot({ path: path.join(shots, 'tracked-click-landing.png') });
  await listener.recorder.flush();
  const rows = await until(async () => {
    const r = await w.p.db('email_engagements').where({ email_id: id }).orderBy('created_at');
    return r.length >= 2 && r;
  });
  t.deepEqual(
    rows.map((r) => [r.kind, r.machine, r.user_agent]),
    [
      ['open', null, BROWSER],
      ['click', null, BROWSER],
    ],
  );
  t.log(`screenshots: ${shots}`);
});

test('the share page in Chromium: the email in a sandboxed frame, no script, no tracking; expired and tampered links say so', async (t) => {
  const { w, listener } = world;
  const { sender, id } = await sendTracked('bob@browser-inbox.test');
  const share = await w.p.request('POST', `/emails/${id}/share`, { key: sender.team.key, body: {} });
  t.is(share.status, 200, share.text);
  const url = w.p.url + new URL(share.body.url).pathname;
  const hitsBefore = await w.p.db('email_engagements').where({ email_id: id }).count({ n: '*' }).first();

  const context = await newContext();
  t.teardown(() => context.close());
  const page = await context.newPage();
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  const res = await page.goto(url);
  t.is(res!.status(), 200);
  t.regex(res!.headers()['content-type'], /^text\/html/);
  t.regex(res!.headers()['content-security-policy'], /default-src 'none'/);
  t.is(await page.locator('h1').textContent(), 'Spring sale');
  const frame = page.locator('iframe');
  t.is(await frame.getAttribute('sandbox'), 'allow-popups allow-popups-to-escape-sandbox');
  const inside = page.frameLocator('iframe');
  await inside.locator('text=Everything half price').waitFor();
  t.false((await inside.locator('body').innerText()).includes('PWNED'), 'no script ran in the frame');
  t.is(await inside.locator('h1').textContent(), 'Spring sale');
  t.regex((await inside.locator('#go').getAttribute('href'))!, /^http:\/\/shop\.browser\.test:\d+\/landing/);
  await page.screenshot({ path: path.join(shots, 'share-page.png'), fullPage: true });
  t.deepEqual(
    requests.filter((r) => !r.startsWith('data:')),
    [url],
    'the page loads nothing but itself: no pixel, no tracked link',
  );
  // A link in the frame opens the original URL in a new tab.
  const [popup] = await Promise.all([context.waitForEvent('page'), inside.locator('#go').click()]);
  await popup.waitForLoadState();
  t.is(popup.url(), `http://shop.browser.test:${landingPort}/landing?x=1&y=2`);
  await listener.recorder.flush();
  t.deepEqual(
    await w.p.db('email_engagements').where({ email_id: id }).count({ n: '*' }).first(),
    hitsBefore,
    'opening the share page recorded no open or click',
  );

  const key = linkKey(w.p.config);
  const expired = sealLink(key, {
    kind: 'email_share',
    teamId: sender.team.id,
    objectId: id,
    expires: nowSeconds() - 60,
  });
  const gone = await page.goto(`${w.p.url}/share/${expired}`);
  t.is(gone!.status(), 410);
  t.is(await page.locator('h1').textContent(), 'This link has expired');
  await page.screenshot({ path: path.join(shots, 'share-expired.png') });
  const token = new URL(share.body.url).pathname.split('/').pop()!;
  const tampered = await page.goto(`${w.p.url}/share/${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`);
  t.is(tampered!.status(), 404);
  t.is(await page.locator('h1').textContent(), 'Link not found');
  await page.screenshot({ path: path.join(shots, 'share-invalid.png') });
  t.log(`screenshots: ${shots}`);
});
