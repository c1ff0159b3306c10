// The preference page in a real browser (Debian's headless Chromium): opened from the List-Unsubscribe link of a
// message the mta delivered to the loopback sink, its choices saved through its own forms, and what they did read
// back through the official `resend` SDK and seen by the next sends. Screenshots go to test/screenshots/preferences/
// (desktop, a 390 px phone, the bad-link page, a team with no public topics) for a person to look at.
import test, { type ExecutionContext } from 'ava';
import path from 'node:path';
import { Resend } from 'resend';
import type { Browser, Page } from 'playwright-core';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { createTopic, send, senderTeam, unsubscribeUrl } from './helpers/topic-sends.ts';
import { contactEvents } from './helpers/contacts.ts';
import { freePort } from './helpers/ports.ts';
import { DESKTOP, PHONE, launchChromium, openPage, overflow, screenshotDir, type Visit } from './helpers/browser.ts';
import { unsubscribeToken } from '../shared/emails/mail-tokens.ts';
import { newId } from '../shared/ids.ts';

let w: MtaWorld;
let browser: Browser;
let shots: string;

test.before(async () => {
  // The api at a port chosen first, so the links the mta writes (PUBLIC_BASE_URL) lead to it.
  w = await startMtaWorld({ env: { PORT: String(await freePort()) } });
  browser = await launchChromium();
  shots = await screenshotDir('preferences');
});
test.after.always(async () => {
  await browser?.close();
  await w?.close();
});

const sdk = (key: string) => new Resend(key, { baseUrl: w.p.url } as never);

/** The link of the one message to `address` whose subject is `subject`, as the sink received it. */
function linkIn(address: string, subject: string): string {
  const [copy] = w.sink.deliveredTo(address).filter((m) => m.raw.toString().includes(`Subject: ${subject}`));
  const url = copy && unsubscribeUrl(copy.raw);
  if (!url) throw new Error(`no message "${subject}" with a List-Unsubscribe link reached ${address}`);
  return url;
}

const boxes = (page: Page) =>
  page
    .locator('input[type=checkbox]')
    .evaluateAll((els) =>
      Object.fromEntries(
        (els as HTMLInputElement[]).map((e) => [
          document.querySelector(`label[for="${e.id}"]`)?.textContent,
          e.checked,
        ]),
      ),
    );

/** The page requested nothing but the link and its forms, and logged no error (a CSP violation would be one). */
function inert(t: { deepEqual: (a: unknown, b: unknown, m?: string) => void }, v: Visit, url: string) {
  t.deepEqual(
    v.requests.filter((r) => !r.startsWith(url)),
    [],
  );
  t.deepEqual(v.errors, [], 'no console errors, no CSP violation');
}

/** The page at a phone's width: nothing wider than the screen, every button at least 44 px high and on screen. */
async function atPhoneWidth(t: ExecutionContext, url: string) {
  const phone = await openPage(browser, PHONE, url);
  t.true((await overflow(phone.page)) <= 0, `the page is ${await overflow(phone.page)}px wider than a phone`);
  const buttons = await phone.page
    .getByRole('button')
    .evaluateAll((els) => els.map((e) => e.getBoundingClientRect().toJSON()));
  t.deepEqual(await phone.page.getByRole('button').allTextContents(), [
    'Unsubscribe from “Weekly digest”',
    'Save preferences',
    'Unsubscribe from everything',
  ]);
  for (const box of buttons) t.true(box.height >= 44 && box.right <= PHONE.width, JSON.stringify(box));
  await phone.page.screenshot({ path: path.join(shots, 'phone.png'), fullPage: true });
  inert(t, phone, url);
  await phone.context.close();
}

test('from a delivered message: change two topics, save, unsubscribe from everything; the SDK and the next sends agree', async (t) => {
  const { team, from } = await senderTeam(w, 'prefs-news.test');
  w.mx('prefs-inbox.test');
  const resend = sdk(team.key);
  const digest = await createTopic(w, team, {
    name: 'Weekly digest',
    default_subscription: 'opt_in',
    visibility: 'public',
    description: 'The week in five links, every Friday.',
  });
  const launches = await createTopic(w, team, {
    name: 'Product launches',
    default_subscription: 'opt_out',
    visibility: 'public',
    description: 'New products, about once a month.',
  });
  const events = await createTopic(w, team, { name: 'Events', default_subscription: 'opt_in', visibility: 'public' });
  const beta = await createTopic(w, team, { name: 'Internal beta', default_subscription: 'opt_in' });
  const address = 'dana@prefs-inbox.test';
  const { data: contact } = await resend.contacts.create({ email: address, firstName: 'Dana' });
  t.truthy(contact?.id);

  await send(w, team, { from, to: address, subject: 'Digest 1', html: '<p>Five links</p>', topic_id: digest });
  const url = linkIn(address, 'Digest 1');
  t.true(url.startsWith(`${w.p.url}/unsubscribe/`), url);

  const desktop = await openPage(browser, DESKTOP);
  const { page } = desktop;
  const opened = await page.goto(url);
  t.is(opened?.status(), 200);
  t.is(await page.getByRole('heading', { level: 1 }).textContent(), 'Email preferences');
  t.deepEqual(await boxes(page), { Events: true, 'Product launches': false, 'Weekly digest': true });
  t.false((await page.content()).includes('Internal beta'), 'a private topic never appears');
  t.true(await page.getByText('You got this email because you are subscribed to “Weekly digest”.').isVisible());
  // Reached by keyboard, with a focus ring that shows.
  await page.keyboard.press('Tab');
  t.is(await page.evaluate(() => document.activeElement?.textContent), 'Unsubscribe from “Weekly digest”');
  t.is(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle), 'solid');
  await page.screenshot({ path: path.join(shots, 'desktop.png'), fullPage: true });
  await atPhoneWidth(t, url);

  // Two changes: no more digest, launches wanted.
  await page.getByLabel('Weekly digest').uncheck();
  await page.getByLabel('Product launches').check();
  await page.getByRole('button', { name: 'Save preferences' }).click();
  await page.getByRole('status').waitFor();
  t.is(await page.getByRole('status').textContent(), 'Your preferences are saved.');
  t.deepEqual(await boxes(page), { Events: true, 'Product launches': true, 'Weekly digest': false });
  t.true(await page.getByText('You no longer get “Weekly digest” emails.').isVisible());
  await page.screenshot({ path: path.join(shots, 'desktop-saved.png'), fullPage: true });

  const listed = await resend.contacts.topics.list({ email: address });
  t.is(listed.error, null);
  t.deepEqual(
    Object.fromEntries(listed.data!.data.map((x) => [x.name, x.subscription])),
    { 'Weekly digest': 'opt_out', 'Product launches': 'opt_in', Events: 'opt_in', 'Internal beta': 'opt_in' },
    "the page's choices are the contact's; the private topic keeps its default",
  );
  t.is((await resend.contacts.get({ email: address })).data?.unsubscribed, false);

  await page.getByRole('button', { name: 'Unsubscribe from everything' }).click();
  await page.getByRole('status').waitFor();
  t.is(await page.getByRole('status').textContent(), 'You are unsubscribed from everything from News.');
  t.true(await page.getByRole('button', { name: 'Subscribe again' }).isVisible());
  t.deepEqual(await boxes(page), { Events: true, 'Product launches': true, 'Weekly digest': false }, 'choices kept');
  await page.screenshot({ path: path.join(shots, 'desktop-unsubscribed.png'), fullPage: true });
  inert(t, desktop, url);

  const got = await resend.contacts.get({ email: address });
  t.like(got.data, { id: contact!.id, unsubscribed: true });
  const changes = await contactEvents(w.p, team.id);
  t.deepEqual(
    changes.map((e) => [e.type, e.data.unsubscribed]),
    [
      ['contact.created', false],
      ['contact.updated', true],
    ],
  );

  // The next send under a topic the contact chose is suppressed; a send without a topic still reaches it.
  const skipped = await send(w, team, { from, to: address, subject: 'Meetup', text: 'Come along', topic_id: events });
  t.like(await w.p.db('email_recipients').where({ email_id: skipped }).first(), {
    status: 'suppressed',
    last_response: 'the contact is unsubscribed from everything (its `unsubscribed`)',
  });
  t.like((await w.p.db('events').where({ type: 'email.suppressed' }).whereRaw(`data->>'email_id' = ?`, [skipped]))[0], {
    data: { suppressed: { type: 'Suppressed', reason: 'contact_unsubscribed', topic_id: events } },
  });
  await send(w, team, { from, to: address, subject: 'Your receipt', text: 'Thanks' });
  t.deepEqual(
    w.sink
      .deliveredTo(address)
      .map((m) => /^Subject: (.*)\r$/m.exec(m.raw.toString())?.[1])
      .sort(),
    ['Digest 1', 'Your receipt'],
  );

  // Subscribing again restores the choices kept.
  await page.getByRole('button', { name: 'Subscribe again' }).click();
  await page.getByRole('status').waitFor();
  t.is((await resend.contacts.get({ email: address })).data?.unsubscribed, false);
  await send(w, team, { from, to: address, subject: 'Launch day', text: 'New!', topic_id: launches });
  t.is(w.sink.deliveredTo(address).filter((m) => m.raw.toString().includes('Subject: Launch day')).length, 1);
  t.deepEqual(await w.p.db('topic_subscriptions').where({ topic_id: beta }), [], 'the private topic is untouched');
  await desktop.context.close();

  t.log(`screenshots in ${shots}`);
});

test('a bad, tampered or dead link: one plain page that says nothing of why; a team with no public topics', async (t) => {
  const { team, from } = await senderTeam(w, 'prefs-quiet.test');
  w.mx('prefs-quiet-inbox.test');
  const topic = await createTopic(w, team, { name: 'Account tips', default_subscription: 'opt_in' });
  await send(w, team, { from, to: 'erin@prefs-quiet-inbox.test', subject: 'Tip', text: 'x', topic_id: topic });
  const url = linkIn('erin@prefs-quiet-inbox.test', 'Tip');
  const token = url.slice(url.lastIndexOf('/') + 1);

  const v = await openPage(browser, PHONE);
  const bad = [
    `${token.slice(0, -2)}${token.endsWith('AA') ? 'AB' : 'AA'}`,
    token.slice(0, 20),
    // Well formed and signed, but naming no recipient (as a link whose email is gone does).
    unsubscribeToken(w.deps.secrets, newId()),
  ];
  const texts: string[] = [];
  for (const b of bad) {
    const res = await v.page.goto(`${w.p.url}/unsubscribe/${b}`);
    t.is(res?.status(), 404, b);
    t.is(await v.page.getByRole('heading', { level: 1 }).textContent(), 'This link does not work');
    texts.push(await v.page.locator('main').innerText());
  }
  t.is(new Set(texts).size, 1, 'every bad link gets the same page');
  t.notRegex(texts[0], /token|hmac|signature|recipient|expired|database/i);
  t.true((await overflow(v.page)) <= 0);
  await v.page.screenshot({ path: path.join(shots, 'bad-link.png'), fullPage: true });

  // The team's only topic is private: the page names neither it nor any list, and still offers both ways out.
  v.errors.length = 0; // each 404 above logged its "Failed to load resource"
  await v.page.goto(url);
  const text = await v.page.locator('main').innerText();
  t.notRegex(text, /Account tips/);
  t.regex(text, /News offers no mailing lists to choose from\./);
  t.notRegex(text, /chose above/);
  t.is(await v.page.locator('input[type=checkbox]').count(), 0);
  t.true(await v.page.getByRole('button', { name: 'Unsubscribe from emails like this' }).isVisible());
  t.true(await v.page.getByRole('button', { name: 'Unsubscribe from everything' }).isVisible());
  t.true((await overflow(v.page)) <= 0);
  await v.page.screenshot({ path: path.join(shots, 'no-topics.png'), fullPage: true });
  t.deepEqual(v.errors, []);
  await v.context.close();
});
