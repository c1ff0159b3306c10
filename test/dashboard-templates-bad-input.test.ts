// The templates pages given bad input, in a real browser against the real api: HTML in every string a person controls
// is shown as text (the page, the block list, the preview's subject and the email itself); refused saves show the
// api's message and field paths, open the block a template error names, and keep every edit; a 2 MB block document
// is refused with the api's message; a session that ended mid-edit loses nothing across signing in again; a viewer
// reads and previews but is offered no change, and the api refuses one regardless. Loading and error states too.
import test from 'ava';
import type { Page } from 'playwright-core';
import { DESKTOP, openPage } from './helpers/browser.ts';
import { signIn as cookieSignIn } from './helpers/accounts.ts';
import {
  frameText,
  look,
  PASSWORD,
  signInPage,
  startTemplatesWorld,
  unexpected,
  type TemplatesWorld,
} from './helpers/dashboard-templates.ts';
import { until } from './helpers/wait.ts';

let world: TemplatesWorld;
let id: string;
const NAME = '<script>alert("name")</script> Offer';
const TEXT = '<img src=x onerror=alert(1)> & <i>not italic</i>';
test.before(async () => {
  world = await startTemplatesWorld();
  const created = await world.owner.c.request('POST', '/templates', {
    body: {
      name: NAME,
      subject: '<b>Deal</b> for {{{WHO}}}',
      variables: [{ key: 'WHO', type: 'string', fallback_value: '<em>friend</em>' }],
      document: {
        blocks: [
          { id: 'title', type: 'heading', text: 'Hello' },
          { id: 'body', type: 'text', text: TEXT },
          { id: 'cta', type: 'button', text: '<u>Go</u>', href: 'https://example.com' },
          { id: 'foot', type: 'footer', text: 'Postwerk, 1 Main Street' },
        ],
      },
    },
  });
  if (created.status !== 201) throw new Error(created.text);
  id = created.body.id;
});
test.after.always(async () => {
  await world?.close();
});

const alertText = async (page: Page) => (await page.locator('#save-error [role=alert]').textContent()) ?? '';

test.serial('HTML is text everywhere; refused saves keep the edits; 2 MB; an ended session', async (t) => {
  t.timeout(240_000);
  const url = world.p.url;
  const v = await openPage(world.browser, DESKTOP);
  const { page } = v;
  await signInPage(page, url, world.owner.email);
  await page.goto(`${url}/dashboard/templates/${id}`);
  await until(async () => (await frameText(page)).includes(TEXT), { what: 'the preview', timeoutMs: 20_000 });
  t.is(await page.locator('h1').textContent(), NAME);
  t.is(await page.locator('.preview-subject').textContent(), 'Subject: <b>Deal</b> for <em>friend</em>');
  t.is(await page.locator('[data-block-select="body"] .summary').textContent(), TEXT);
  t.is(await page.locator('img[src=x], b, em, u').count(), 0, 'no markup from the strings in the page');
  const frame = page.frameLocator('iframe.email-frame');
  t.is(await frame.locator('img[src=x], i, u').count(), 0, 'no markup from the strings in the email');
  t.regex(await frameText(page), /<u>Go<\/u>/);
  await look(t, page, world.shots, 'template-html-strings');

  // A link the api refuses: its message and the field's path; the edit stays.
  await page.locator('[data-block-select="cta"]').click();
  await page.getByLabel('Link', { exact: true }).fill('javascript:alert(1)');
  await page.getByRole('button', { name: 'Save draft' }).click();
  await page.locator('#save-error').waitFor();
  t.regex(await alertText(page), /document\.blocks\.2\.href/);
  t.is(await page.getByLabel('Link', { exact: true }).inputValue(), 'javascript:alert(1)', 'the edit is kept');
  t.is(await page.locator('.unsaved').count(), 1);
  await look(t, page, world.shots, 'template-save-refused');
  await page.getByLabel('Link', { exact: true }).fill('https://example.com/ok');

  // A template error names its block: the editor opens it.
  await page.locator('[data-block-select="body"]').click();
  await page.getByLabel('Text', { exact: true }).fill('Hi {{{NOBODY}}}');
  await page.locator('[data-block-select="body"]').click();
  await page.getByRole('button', { name: 'Save draft' }).click();
  await until(async () => /document\.blocks\.1\.text/.test(await alertText(page)), { what: 'the 422' });
  t.is(await page.locator('[data-block-select="body"]').getAttribute('aria-expanded'), 'true', 'the block is open');

  // 2 MB in a block (twice the limit): the api's own message; the 2 MB stay in the editor; the saved draft is
  // unchanged. Chromium lays a megabyte-long textarea out in seconds (a bare page, 5 MB: 4 s on a quiet machine), more
  // on a busy one: these steps get minutes.
  const huge = 'y'.repeat(2 * 1024 * 1024);
  await page.getByLabel('Text', { exact: true }).fill(huge, { timeout: 120_000 });
  await page.getByRole('button', { name: 'Save draft' }).click({ timeout: 120_000 });
  await until(async () => /larger than 1048576 bytes/.test(await alertText(page)), {
    what: 'the 413',
    timeoutMs: 120_000,
  });
  t.is((await page.getByLabel('Text', { exact: true }).inputValue()).length, huge.length);
  await page.locator('.preview-panel [role=alert]').waitFor({ timeout: 120_000 });
  t.regex((await page.locator('.preview-panel [role=alert]').textContent()) ?? '', /larger than 1048576 bytes/);
  const kept = await world.owner.c.request('GET', `/templates/${id}`);
  t.is(kept.body.document.blocks[1].text, TEXT, 'nothing was saved');
  await page.getByLabel('Text', { exact: true }).fill('Back to normal', { timeout: 120_000 });
  // Rendered again (it was refused): the save, not this preview's request, finds the session ended below.
  await page.locator('.preview-panel [role=status]', { hasText: 'Up to date.' }).waitFor({ timeout: 120_000 });

  // The session ends mid-edit: the sign-in-again dialog over the editor (web/src/expired.tsx); the page stays, so
  // the edits are still there after signing in again, and the next save sends them.
  await world.p.db('sessions').del();
  await page.getByRole('button', { name: 'Save draft' }).click();
  const dialog = page.getByRole('dialog', { name: 'Your session has ended' });
  await dialog.waitFor();
  await look(t, page, world.shots, 'template-session-ended');
  await dialog.locator('input[name=password]').fill(PASSWORD);
  await dialog.locator('button[type=submit]').click();
  await dialog.waitFor({ state: 'detached' });
  t.is(await page.getByLabel('Text', { exact: true }).inputValue(), 'Back to normal', 'the edit is kept');
  await page.getByRole('button', { name: 'Save draft' }).click();
  await page.getByText('Draft saved.').waitFor();
  const c = await cookieSignIn(url, world.owner.email, PASSWORD);
  const after = await c.request('GET', `/templates/${id}`);
  t.is(after.body.document.blocks[1].text, 'Back to normal');
  t.is(after.body.document.blocks[2].href, 'https://example.com/ok');
  t.deepEqual(unexpected(v), []);
  await v.context.close();
});

test.serial(
  'a viewer reads and previews, is offered no change, and the api refuses one; loading and error',
  async (t) => {
    t.timeout(180_000);
    const url = world.p.url;
    const v = await openPage(world.browser, DESKTOP);
    const { page } = v;
    await signInPage(page, url, world.viewer.email);
    t.is(await page.locator('.role').textContent(), 'viewer');
    // The list held back until its screenshot is taken: the loading state.
    let release = () => {};
    const held = new Promise<void>((done) => (release = done));
    await page.route(/\/templates\?/, async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${url}/dashboard/templates`);
    await page.getByText('Loading templates').waitFor();
    await look(t, page, world.shots, 'templates-loading');
    release();
    await page.getByRole('link', { name: NAME }).waitFor();
    await page.unroute(/\/templates\?/);
    t.is(await page.locator('#new-template-form').count(), 0, 'no create form for a viewer');
    t.is(await page.getByRole('button', { name: /^(Duplicate|Delete) / }).count(), 0);
    await look(t, page, world.shots, 'templates-viewer');

    await page.getByRole('link', { name: NAME }).click();
    await until(async () => (await frameText(page)).includes('Back to normal'), { what: "the viewer's preview" });
    t.is(await page.getByRole('button', { name: 'Save draft' }).count(), 0);
    t.is(await page.getByRole('button', { name: 'Publish' }).count(), 0);
    t.is(await page.getByRole('button', { name: /^Move / }).count(), 0);
    t.true(await page.locator('#details-title ~ fieldset input[name=name]').isDisabled());
    await look(t, page, world.shots, 'template-viewer');

    const viewer = await cookieSignIn(url, world.viewer.email, PASSWORD);
    const refused = await viewer.request('PATCH', `/templates/${id}`, { body: { name: 'Mine now' } });
    t.is(refused.status, 403, 'the api enforces the role whatever the page shows');
    t.is((await viewer.request('POST', `/templates/${id}/duplicate`, { body: {} })).status, 403);
    t.deepEqual(unexpected(v), []);
    await v.context.close();
  },
);
