// A person in a real browser (Debian's headless Chromium): signs up on the account page, opens the mailed link
// (sent by the platform team, delivered by the real mta to the loopback sink), signs in, turns MFA on, signs out
// and signs in again with a code: the real cookie flow, the CSRF header sent by the page's script.
import test from 'ava';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from './helpers/browser.ts';
import { generate } from 'otplib';
import { linkToken, PEOPLE, startAccountsWorld, type AccountsWorld } from './helpers/accounts.ts';

let world: AccountsWorld;
let browser: Browser;
test.before(async () => {
  world = await startAccountsWorld();
  browser = await launchChromium();
});
test.after.always(async () => {
  await browser?.close();
  await world?.close();
});

test('sign up, verify by the mailed link, sign in, turn MFA on, sign out, sign in with a code', async (t) => {
  t.timeout(180_000);
  const shots = await mkdtemp(path.join(tmpdir(), 'postwerk-account-'));
  const url = world.w.p.url;
  const email = `browser@${PEOPLE}`;
  const password = 'a long browser password';
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  page.on('console', (m) => {
    // A refused request (the signed-out page's first GET /me) is logged by Chromium as a console error; it is expected.
    if (m.type() === 'error' && !/status of 401/.test(m.text())) errors.push(m.text());
  });

  await page.goto(`${url}/account#signup`);
  await page.locator('#signup-form input[name=name]').fill('Bria');
  await page.locator('#signup-form input[name=email]').fill(email);
  await page.locator('#signup-form input[name=password]').fill(password);
  await page.locator('#signup-form button').click();
  await page.locator('#sent').waitFor();
  t.regex((await page.locator('#note').textContent()) ?? '', /Check your inbox/);

  const mail = await world.mailTo(email);
  // The mail links to the dashboard's page (/verify#token=…); a link of the old form, in a mail sent before the
  // dashboard, still works on this page.
  t.true(mail.text.includes(`${world.w.p.config.PUBLIC_BASE_URL}/verify#token=`), mail.text);
  await page.goto(`${url}/account#verify=${encodeURIComponent(linkToken(mail.text, 'verify'))}`);
  await page.locator('#login').waitFor();
  t.regex((await page.locator('#note').textContent()) ?? '', /confirmed/);

  await page.locator('#login-form input[name=email]').fill(email);
  await page.locator('#login-form input[name=password]').fill(password);
  await page.locator('#login-form button').click();
  await page.locator('#home').waitFor();
  t.is(await page.locator('#who').textContent(), email);
  const cookies = await context.cookies();
  const session = cookies.find((c) => c.name === 'postwerk_session');
  t.truthy(session);
  t.true(session!.httpOnly);
  t.is(session!.sameSite, 'Lax');
  t.false(cookies.find((c) => c.name === 'postwerk_csrf')!.httpOnly, 'the page reads the CSRF cookie');
  t.is(
    await page.evaluate(() => document.cookie.includes('postwerk_session')),
    false,
    'scripts cannot read the session',
  );

  await page.locator('#enrol').click();
  await page.locator('#enrolment').waitFor();
  const secret = (await page.locator('#secret').textContent())!.trim();
  t.regex((await page.locator('#otpauth').textContent()) ?? '', /^otpauth:\/\/totp\//);
  await page.locator('#confirm-form input[name=code]').fill(await generate({ secret }));
  await page.locator('#confirm-form input[name=password]').fill(password);
  await page.locator('#confirm-form button').click();
  await page.locator('#codes').waitFor();
  const codes = ((await page.locator('#recovery-codes').textContent()) ?? '').split('\n');
  t.is(codes.length, 10);
  t.is(await page.locator('#mfa-state').textContent(), 'on');
  await page.screenshot({ path: path.join(shots, 'mfa-on.png') });

  await page.locator('#logout').click();
  await page.locator('#login').waitFor();
  await page.locator('#login-form input[name=email]').fill(email);
  await page.locator('#login-form input[name=password]').fill(password);
  await page.locator('#login-form button').click();
  await page.locator('#mfa').waitFor();
  await page.screenshot({ path: path.join(shots, 'mfa-challenge.png') });
  // The next step's code: this step's was spent confirming the enrolment (a code works once).
  const next = await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 });
  await page.locator('#mfa-form input[name=code]').fill(next);
  await page.locator('#mfa-form button').click();
  await page.locator('#home').waitFor();
  t.is(await page.locator('#who').textContent(), email);
  t.is(await page.locator('#mfa-state').textContent(), 'on');
  await page.screenshot({ path: path.join(shots, 'signed-in.png') });
  t.log(`screenshots: ${shots}`);
  t.deepEqual(errors, []);
  await context.close();
});
