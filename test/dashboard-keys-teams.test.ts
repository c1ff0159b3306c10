// API keys and teams in a real browser (Debian's headless Chromium) against the real api: a sending key bound to one
// domain (the binding in the list, and the api refusing that key another sender domain), an admin revoking a key
// (gone from the list, refused by the api); a person in two teams switching between them in the header (with the
// mouse, then with the keyboard) and each page showing the current team's data and role; the domains page with no
// domain; the loading state of the keys and domains lists while the api is slow. axe-core on every state, screenshots
// at 1280 and 390 pixels.
import test from 'ava';
import type { Browser } from 'playwright-core';
import { launchChromium } from './helpers/browser.ts';
import { answerConfirm, buildDashboard, look, tabTo, whileLoading } from './helpers/dashboard.ts';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { browse, person, unexpected } from './helpers/dashboard-ops.ts';
import { newId } from '../shared/ids.ts';

let p: Platform;
let browser: Browser;
test.before(async () => {
  await buildDashboard();
  p = await startPlatform();
  browser = await launchChromium();
});
test.after.always(async () => {
  await browser?.close();
  await p?.close();
});

test.serial('API keys: a sending key bound to one domain, listed with it; an admin revokes a key', async (t) => {
  t.timeout(120_000);
  const owner = await person(p, 'keys-owner@people.test');
  const shop = await owner.client.request('POST', '/domains', { body: { name: 'bound-shop.test' } });
  t.is(shop.status, 201, shop.text);
  const managed = (await owner.client.request('GET', '/domains')).body.data.find(
    (d: { managed: boolean }) => d.managed,
  );
  const v = await browse(browser, owner);
  const { page } = v;
  await whileLoading(page, '/api-keys', async () => {
    await page.goto(`${p.url}/dashboard/api-keys`);
    await page.getByText('Loading API keys…').waitFor();
    await look(t, page, 'api-keys-loading');
  });
  await page.getByText('No API keys yet').waitFor();

  const form = page.locator('#new-key-form');
  await form.getByLabel('Name').fill('Shop <b>sender</b>');
  await form.getByLabel('Permission').selectOption('sending_access');
  await form.getByLabel('Domain').selectOption({ label: 'bound-shop.test' });
  await form.getByRole('button', { name: 'Create key' }).click();
  const bound = ((await page.locator('#new-key-token').textContent()) ?? '').trim();
  t.regex(bound, /^[a-z]+_[A-Za-z0-9]{20,}$/);
  const row = page.getByRole('row', { name: /Shop <b>sender<\/b>/ });
  await row.waitFor();
  t.deepEqual(
    (await row.getByRole('cell').allTextContents()).slice(2, 4),
    ['sending_access', 'bound-shop.test'],
    'the permission and the one domain in the list',
  );
  const listed = (await owner.client.request('GET', '/api-keys')).body.data;
  t.like(listed[0], { name: 'Shop <b>sender</b>', permission: 'sending_access', domain_id: shop.body.id });
  // The binding holds: the key may not send from the team's other (verified, managed) domain.
  const elsewhere = await p.request('POST', '/emails', {
    key: bound,
    body: { from: `hi@${managed.name}`, to: 'someone@people.test', subject: 'x', text: 'x' },
  });
  t.is(elsewhere.status, 403, elsewhere.text);
  t.regex(elsewhere.body.message, /only send from its own domain/);
  await page.getByRole('button', { name: 'Done' }).click();
  // The form starts again as it was: full access, no domain (what it shows is what it sends).
  t.is(await form.getByLabel('Permission').inputValue(), 'full_access');
  t.is(await form.getByLabel('Domain').count(), 0);

  await form.getByLabel('Name').fill('Old key');
  await form.getByRole('button', { name: 'Create key' }).click();
  const old = ((await page.locator('#new-key-token').textContent()) ?? '').trim();
  await page.getByRole('row', { name: /Old key/ }).waitFor();
  t.is(
    (
      await page
        .getByRole('row', { name: /Old key/ })
        .getByRole('cell')
        .allTextContents()
    )[3],
    '—',
  );
  t.is((await p.request('GET', '/domains', { key: old })).status, 200, 'the key works before');
  await look(t, page, 'api-keys-bound');
  // Asked first (the page's own dialog): Cancel keeps the key; Revoke revokes it.
  await page.getByRole('button', { name: 'Revoke Old key' }).click();
  await page.getByRole('dialog', { name: 'Revoke “Old key”?' }).waitFor();
  await look(t, page, 'api-key-revoke-confirm');
  await answerConfirm(page, 'Revoke “Old key”?', 'Cancel');
  t.is((await p.request('GET', '/domains', { key: old })).status, 200, 'kept on Cancel');
  await page.getByRole('button', { name: 'Revoke Old key' }).click();
  await answerConfirm(page, 'Revoke “Old key”?', 'Revoke');
  await page.getByRole('row', { name: /Old key/ }).waitFor({ state: 'detached' });
  await page.getByRole('row', { name: /Shop <b>sender<\/b>/ }).waitFor();
  t.is(await page.getByRole('row', { name: /Old key/ }).count(), 0, 'gone from the list, the other key stays');
  const refused = await p.request('GET', '/domains', { key: old });
  t.is(refused.status, 403, refused.text);
  t.is(refused.body.name, 'invalid_api_key');
  await page.reload();
  await page.getByRole('row', { name: /Shop <b>sender<\/b>/ }).waitFor();
  t.is(await page.getByRole('row', { name: /Old key/ }).count(), 0, 'a revoked key is not listed');
  t.like(
    (await owner.client.request('GET', '/api-keys')).body.data.find((k: { name: string }) => k.name === 'Old key'),
    { status: 'revoked' },
    'the api lists it as revoked',
  );
  t.deepEqual(unexpected(v.errors), []);
  await v.context.close();
});

test.serial(
  'the team switcher: a person in two teams sees each team’s data and role, by mouse or keyboard',
  async (t) => {
    t.timeout(120_000);
    const ann = await person(p, 'ann-switch@people.test');
    const bob = await person(p, 'bob-switch@people.test');
    await p.db('teams').where({ id: bob.teamId }).update({ name: 'Bob’s <i>team</i>' });
    const annUser = await p.db('users').where({ email: 'ann-switch@people.test' }).first('id');
    await p.db('team_members').insert({ id: newId(), team_id: bob.teamId, user_id: annUser.id, role: 'viewer' });
    for (const [who, address, key] of [
      [ann, 'only-ann@people.test', 'Ann’s key'],
      [bob, 'only-bob@people.test', 'Bob’s key'],
    ] as const) {
      t.is((await who.client.request('POST', '/suppressions', { body: { email: address } })).status, 201);
      t.is((await who.client.request('POST', '/api-keys', { body: { name: key } })).status, 201);
    }

    const v = await browse(browser, ann);
    const { page } = v;
    // The browser's session as the api has it (a switch replaces the session's token, so asked from the page).
    const currentTeam = () =>
      page.evaluate(async () => ((await (await fetch('/me')).json()) as { current_team_id: string }).current_team_id);
    await page.goto(`${p.url}/dashboard/suppressions`);
    await page.getByRole('cell', { name: 'only-ann@people.test', exact: true }).waitFor();
    t.is(await page.locator('.role').textContent(), 'admin');
    t.deepEqual(await page.locator('.team select option').allTextContents(), [
      'Team of ann-switch@people.test',
      'Bob’s <i>team</i>',
    ]);
    await look(t, page, 'team-switcher');

    await page.locator('.team select').selectOption({ label: 'Bob’s <i>team</i>' });
    await page.getByRole('cell', { name: 'only-bob@people.test', exact: true }).waitFor();
    t.is(await page.locator('.role').textContent(), 'viewer');
    t.is(
      await page.getByRole('cell', { name: 'only-ann@people.test', exact: true }).count(),
      0,
      'the other team’s list',
    );
    t.is(await page.locator('#add-suppression-form').count(), 0, 'a viewer in this team: no add form');
    t.is(await currentTeam(), bob.teamId, 'the session’s current team');
    await page.goto(`${p.url}/dashboard/api-keys`);
    await page.getByRole('cell', { name: 'Bob’s key', exact: true }).waitFor();
    t.is(await page.getByRole('cell', { name: 'Ann’s key', exact: true }).count(), 0);
    t.is(await page.locator('#new-key-form').count(), 0);
    await look(t, page, 'team-switched');

    // Back with the keyboard: Tab to the switcher, an arrow key picks the team above.
    await tabTo(t, page, (f) => f.tag === 'select', 'the team switcher');
    await page.keyboard.press('ArrowUp');
    await page.getByRole('cell', { name: 'Ann’s key', exact: true }).waitFor();
    t.is(await page.locator('.role').textContent(), 'admin');
    t.is(await page.locator('#new-key-form').count(), 1, 'an admin here: the create form');
    t.is(await currentTeam(), ann.teamId);
    t.deepEqual(unexpected(v.errors), []);
    await v.context.close();
  },
);

test.serial('the domains page: loading while the api is slow, then empty', async (t) => {
  t.timeout(120_000);
  const owner = await person(p, 'no-domains@people.test');
  // A team with no domain at all: the api keeps a team's managed domain (it cannot be deleted through it), so it
  // goes in SQL here, as a team made before managed domains has none.
  await p.db('domains').where({ team_id: owner.teamId }).delete();
  const v = await browse(browser, owner);
  const { page } = v;
  await whileLoading(page, '/domains', async () => {
    await page.goto(`${p.url}/dashboard/domains`);
    await page.getByText('Loading domains…').waitFor();
    await look(t, page, 'domains-loading');
  });
  await page.getByText('No domains yet. Add the domain you send from above.').waitFor();
  await look(t, page, 'domains-empty');
  t.deepEqual(unexpected(v.errors), []);
  await v.context.close();
});
