// The templates pages in a real browser (Debian's headless Chromium) against the real api: the list (empty, create,
// search, duplicate, delete), the block editor (a block of every kind added, edited, moved with the keyboard, a
// column's blocks, the variables panel), the live preview rendered by the api and shown in a sandboxed frame under
// the dashboard's strict CSP (styled, at 390 and 600 pixels), the pre-send checks pointing at a block, save draft and
// publish, and the HTML mode. Every page is checked by axe-core and photographed at 1280 and 390 pixels.
import test, { type ExecutionContext } from 'ava';
import type { Page } from 'playwright-core';
import path from 'node:path';
import { answerConfirm } from './helpers/dashboard.ts';
import { DESKTOP, PHONE, openPage } from './helpers/browser.ts';
import {
  frameText,
  look,
  signInPage,
  startTemplatesWorld,
  unexpected,
  type TemplatesWorld,
} from './helpers/dashboard-templates.ts';
import { until } from './helpers/wait.ts';

let world: TemplatesWorld;
test.before(async () => {
  world = await startTemplatesWorld();
});
test.after.always(async () => {
  await world?.close();
});

const topOrder = (page: Page) =>
  page.locator('#blocks-title ~ ol.blocks > li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-block')));

async function addBlock(page: Page, kind: string, where = 'to the email') {
  await page.getByLabel(`Kind of block to add ${where}`).selectOption(kind);
  await page.getByRole('button', { name: `Add ${where}` }).click();
}

/** A social link with no icon of its own shows the platform's in the preview (served by the api, no third party's). */
async function socialIconShown(t: ExecutionContext, page: Page, shots: string, publicBaseUrl: string) {
  const icon = page.frameLocator('iframe.email-frame').locator('img[alt="web"]');
  await until(async () => (await icon.evaluate((i: HTMLImageElement) => i.naturalWidth)) === 48, {
    what: "the social link's default icon in the preview",
    timeoutMs: 20_000,
  });
  t.is(await icon.getAttribute('src'), `${publicBaseUrl}/email-assets/social/web.png`);
  await icon.scrollIntoViewIfNeeded();
  await page.locator('iframe.email-frame').screenshot({ path: path.join(shots, 'template-preview-social-1280.png') });
}

test.serial('the list, a new block template, every kind of block, preview, checks, save and publish', async (t) => {
  t.timeout(240_000);
  const url = world.p.url;
  const v = await openPage(world.browser, DESKTOP);
  const { page } = v;
  await signInPage(page, url, world.owner.email);
  await page.getByRole('link', { name: 'Templates' }).click();
  await page.getByText('No templates yet').waitFor();
  await look(t, page, world.shots, 'templates-empty');

  await page.locator('#new-template-form input[name=name]').fill('Welcome <img src=x onerror=alert(1)>');
  await page.locator('#new-template-form button[type=submit]').click();
  await page.locator('#blocks-title').waitFor();
  t.regex(page.url(), /\/dashboard\/templates\/[0-9a-f-]{36}$/, 'the template has its own URL');
  t.is(await page.locator('h1').textContent(), 'Welcome <img src=x onerror=alert(1)>', 'the name is text');
  t.is(await page.locator('img[src=x]').count(), 0);

  // The preview: the api's rendering, styled (MJML's inline styles apply inside the frame despite the page's CSP).
  await until(async () => (await frameText(page)).includes('Hello there'), { what: 'the preview', timeoutMs: 20_000 });
  const frame = page.frameLocator('iframe.email-frame');
  t.is(await frame.locator('h1').evaluate((h) => getComputedStyle(h).fontSize), '28px', 'inline styles apply');
  t.is(await page.locator('iframe.email-frame').getAttribute('sandbox'), 'allow-popups allow-popups-to-escape-sandbox');
  await look(t, page, world.shots, 'template-editor');

  for (const kind of ['heading', 'text', 'image', 'button', 'divider', 'columns', 'social', 'footer'])
    await addBlock(page, kind);
  t.deepEqual(await topOrder(page), [
    'heading-1',
    'text-1',
    'button-1',
    'footer-1',
    'heading-2',
    'text-2',
    'image-1',
    'button-2',
    'divider-1',
    'columns-1',
    'social-1',
    'footer-2',
  ]);
  await socialIconShown(t, page, world.shots, world.p.config.PUBLIC_BASE_URL);
  // A block in the second column of the columns block, edited there.
  await page.locator('[data-block-select="columns-1"]').click();
  await addBlock(page, 'button', 'to column 2');
  await page.getByLabel('Label', { exact: true }).fill('Column <b>button</b>');
  await until(async () => (await frameText(page)).includes('Column <b>button</b>'), { what: 'the column button' });

  // The variables panel: a declared variable with its fallback, printed by a block.
  await page.getByRole('button', { name: 'Add a variable' }).click();
  await page.locator('.variable').nth(1).getByLabel('Key').fill('CITY');
  await page.locator('.variable').nth(1).getByLabel('Fallback').fill('Berlin');
  await page.locator('[data-block-select="text-1"]').click();
  await page.getByLabel('Text', { exact: true }).fill('The weather in {{{CITY}}} is fine.');
  await until(async () => (await frameText(page)).includes('The weather in Berlin is fine.'), { what: 'the fallback' });
  // A sample value for the preview only: shown, never saved.
  await page.getByText('Sample values').click();
  await page.getByLabel('Sample CITY').fill('Paris <b>');
  await until(async () => (await frameText(page)).includes('The weather in Paris <b> is fine.'), {
    what: 'the sample',
  });
  await page.getByLabel('Sample CITY').fill('');
  await until(async () => (await frameText(page)).includes('The weather in Berlin is fine.'), { what: 'the fallback' });

  // A check finding about a block points at it: an http: link warns, and its button opens and focuses the block.
  await page.locator('[data-block-select="button-1"]').click();
  await page.getByLabel('Link', { exact: true }).fill('http://example.com/plain');
  await page.locator('[data-block-select="button-1"]').click();
  const goTo = page.locator('[data-check-block="button-1"]').first();
  await goTo.waitFor({ timeout: 20_000 });
  await goTo.click();
  t.is(await page.locator('[data-block-select="button-1"]').getAttribute('aria-expanded'), 'true');
  t.is(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.blockSelect), 'button-1');
  await look(t, page, world.shots, 'template-editor-blocks');

  await page.getByRole('button', { name: 'Mobile (390 px)' }).click();
  t.is(Math.round((await page.locator('iframe.email-frame').boundingBox())!.width), 390);
  await look(t, page, world.shots, 'template-editor-mobile-preview');
  // On a phone: the frame scrolled into view shows the email (a full-page screenshot leaves a framed document that
  // is out of view unpainted, so this one is of the window).
  await page.setViewportSize(PHONE);
  await page.locator('iframe.email-frame').scrollIntoViewIfNeeded();
  t.regex(await frameText(page), /The weather in Berlin is fine\./);
  await page.screenshot({ path: path.join(world.shots, 'template-preview-on-a-phone-390.png') });
  await page.setViewportSize(DESKTOP);
  await page.getByRole('button', { name: 'Desktop (600 px)' }).click();
  t.is(Math.round((await page.locator('iframe.email-frame').boundingBox())!.width), 600);

  await keyboardMoves(t, page);

  await page.getByRole('button', { name: 'Save draft' }).click();
  await page.getByText('Draft saved.').waitFor();
  const id = page.url().split('/').pop()!;
  const saved = await world.owner.c.request('GET', `/templates/${id}`);
  t.is(saved.body.status, 'draft');
  t.is(saved.body.document.blocks.length, 12);
  t.is(saved.body.document.blocks[9].columns[1].blocks[0].text, 'Column <b>button</b>');
  t.deepEqual(
    saved.body.variables.map((x: { key: string; fallback_value: unknown }) => [x.key, x.fallback_value]),
    [
      ['NAME', 'there'],
      ['CITY', 'Berlin'],
    ],
  );
  await page.getByRole('button', { name: 'Publish' }).click();
  await page.getByText('Published: sends use this version now.').waitFor();
  t.is(await page.locator('.editor-top .badge').textContent(), 'published');
  t.is((await world.owner.c.request('GET', `/templates/${id}`)).body.status, 'published');
  await look(t, page, world.shots, 'template-published');
  t.deepEqual(unexpected(v), []);
  await v.context.close();
});

/** Keyboard only: Tab to a block, Enter opens it, type in its field, Alt+ArrowDown / Alt+ArrowUp move it. */
async function keyboardMoves(t: import('ava').ExecutionContext, page: Page) {
  await page.locator('[data-block-select="heading-1"]').focus();
  await page.keyboard.press('Enter');
  t.is(await page.locator('[data-block-select="heading-1"]').getAttribute('aria-expanded'), 'true');
  for (let i = 0; i < 4; i++) await page.keyboard.press('Tab');
  t.is(await page.evaluate(() => (document.activeElement as HTMLInputElement).labels?.[0]?.textContent), 'Heading');
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.type('Typed by keyboard');
  await page.locator('[data-block-select="heading-1"]').focus();
  await page.keyboard.press('Alt+ArrowDown');
  await page.keyboard.press('Alt+ArrowDown');
  t.deepEqual((await topOrder(page)).slice(0, 3), ['text-1', 'button-1', 'heading-1']);
  t.is(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.blockSelect), 'heading-1');
  t.regex((await page.locator('[role=status].visually-hidden').textContent()) ?? '', /position 3 of 12/);
  await page.keyboard.press('Alt+ArrowUp');
  await page.keyboard.press('Alt+ArrowUp');
  await page.keyboard.press('Alt+ArrowUp'); // at the top already: nothing moves
  t.deepEqual((await topOrder(page)).slice(0, 3), ['heading-1', 'text-1', 'button-1']);
  await until(async () => (await frameText(page)).startsWith('Typed by keyboard'), { what: 'the typed heading' });
}

test.serial('search, duplicate and delete in the list; an HTML template in HTML mode', async (t) => {
  t.timeout(180_000);
  const url = world.p.url;
  const v = await openPage(world.browser, DESKTOP);
  const { page } = v;
  await signInPage(page, url, world.owner.email);
  await page.goto(`${url}/dashboard/templates`);
  await page.locator('#new-template-form select[name=kind]').selectOption('html');
  await page.locator('#new-template-form input[name=name]').fill('Receipt');
  await page.locator('#new-template-form button[type=submit]').click();
  await page.locator('#html-title').waitFor();
  await page.getByLabel('HTML body').fill('<h1 style="color:#b3261e">Your receipt</h1><p>Total: {{{NAME}}}</p>');
  await until(async () => (await frameText(page)).includes('Total: there'), { what: 'the html preview' });
  const color = await page
    .frameLocator('iframe.email-frame')
    .locator('h1')
    .evaluate((h) => getComputedStyle(h).color);
  t.is(color, 'rgb(179, 38, 30)', 'the inline style applies in the frame');
  await look(t, page, world.shots, 'template-html-mode');
  await page.getByRole('button', { name: 'Save draft' }).click();
  await page.getByText('Draft saved.').waitFor();

  await page.getByRole('link', { name: '← Templates' }).click();
  await page.getByRole('link', { name: 'Receipt' }).waitFor();
  await page.getByRole('button', { name: 'Duplicate Receipt' }).click();
  await page.getByRole('link', { name: 'Receipt (copy)' }).waitFor();
  await look(t, page, world.shots, 'templates');
  await page.getByLabel('Search templates').fill('copy');
  await until(async () => (await page.locator('tbody tr').count()) === 1, { what: 'the search' });
  await page.getByLabel('Search templates').fill('no such template');
  await page.getByText('No template matches').waitFor();
  await look(t, page, world.shots, 'templates-no-match');
  await page.getByLabel('Search templates').fill('');
  await page.getByRole('button', { name: 'Delete Receipt (copy)' }).click();
  await answerConfirm(page, 'Delete “Receipt (copy)”?', 'Delete');
  await page.getByText('Deleted “Receipt (copy)”.').waitFor();
  t.is(await page.getByRole('link', { name: 'Receipt (copy)' }).count(), 0);
  const list = await world.owner.c.request('GET', '/templates');
  t.is(list.status, 200, list.text);
  t.false(
    list.body.data.some((x: { name: string }) => x.name === 'Receipt (copy)'),
    'deleted in the api',
  );

  await page.goto(`${url}/dashboard/templates/00000000-0000-4000-8000-000000000000`);
  await page.getByRole('alert').waitFor();
  t.regex((await page.getByRole('alert').textContent()) ?? '', /not found/i);
  await look(t, page, world.shots, 'template-not-found');
  t.deepEqual(unexpected(v), []);
  await v.context.close();
});
