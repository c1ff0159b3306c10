// The broadcasts pages in a real browser (Debian's headless Chromium) against the real api, worker and mta (each its
// own process) and a loopback SMTP sink: a broadcast composed in the dashboard to a small segment, its preview,
// saved, sent; it reaches `sent`, the sink receives every message (right recipient, merge values), and its report
// lists the delivered recipients. Bad input: an api refusal shown with its message and field path, HTML in names
// shown as text, failing pre-send checks answered by the send's 422 and acknowledged, a viewer who gets no send or
// edit action (and whose send the api refuses), a session that ends mid-edit. axe and screenshots on every page.
import test from 'ava';
import type { Page } from 'playwright-core';
import { simpleParser } from 'mailparser';
import { answerConfirm } from './helpers/dashboard.ts';
import { browse, look, unexpected } from './helpers/dashboard-ops.ts';
import { startBroadcastsWorld, type BroadcastsWorld } from './helpers/dashboard-broadcasts.ts';
import { until } from './helpers/wait.ts';

let world: BroadcastsWorld;
test.before(async () => {
  world = await startBroadcastsWorld(5);
});
test.after.always(async () => {
  await world?.close();
});

const NAME = 'Launch <img src=x onerror=alert(1)>';
const frameText = async (page: Page) =>
  (await page.frameLocator('iframe.email-frame').locator('body').innerText({ timeout: 15_000 })).trim();
const errorsOf = (errors: string[]) => unexpected(errors).filter((e) => !/ERR_NAME_NOT_RESOLVED/.test(e));

/** The details, then the HTML body, or (`html` null) the block editor's starter document. */
async function compose(page: Page, name: string, html: string | null) {
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('From', { exact: true }).fill(world.from);
  await page.getByLabel('Subject', { exact: true }).fill('Hello {{{FIRST_NAME|there}}}');
  await page.getByLabel('Segment', { exact: true }).selectOption({ label: world.segment.name });
  if (html !== null) await page.getByLabel('HTML body').fill(html);
  else await page.getByRole('button', { name: 'Blocks (visual editor)' }).click();
}

test.serial('compose in the dashboard, send, watch it reach sent, every message received, the report', async (t) => {
  t.timeout(240_000);
  const { page, context, errors } = await browse(world.browser, world.owner, 'Europe/Berlin');
  await page.goto(`${world.w.p.url}/dashboard/overview`);
  await page.getByRole('link', { name: 'Broadcasts' }).click();
  await page.getByText('No broadcasts yet.').waitFor();
  await look(t, page, 'broadcasts-empty');

  await page.getByRole('link', { name: 'New broadcast' }).click();
  await page.locator('#details-title').waitFor();
  // An api refusal: its message and the field's path, nothing lost.
  await page.getByLabel('Name', { exact: true }).fill(NAME);
  await page.getByRole('button', { name: 'Save draft' }).click();
  const refused = page.locator('#save-error [role=alert]');
  await refused.waitFor();
  t.regex((await refused.textContent()) ?? '', /validation_error/);
  t.true((await refused.locator('code').allTextContents()).some((p) => /from|segment_id|subject/.test(p)));
  t.is(await page.getByLabel('Name', { exact: true }).inputValue(), NAME, 'the typed name stays');

  await compose(
    page,
    NAME,
    '<h1>Dear {{{FIRST_NAME|reader}}}</h1><p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
  );
  // Keyboard: the preview text typed after a Tab from the subject.
  await page.getByLabel('Subject', { exact: true }).focus();
  await page.keyboard.press('Tab');
  await page.keyboard.type('News of the week');
  t.is(await page.getByLabel('Preview text').inputValue(), 'News of the week');
  await until(async () => (await frameText(page)).includes('Dear Ada'), { what: 'the preview', timeoutMs: 20_000 });
  t.is(await page.locator('.preview-subject').innerText(), 'Subject: Hello Ada');
  await look(t, page, 'broadcast-composer-new');
  await page.getByRole('button', { name: 'Save draft' }).click();
  await page.waitForURL(/\/dashboard\/broadcasts\/[0-9a-f-]{36}$/);
  await page.locator('#send-title').waitFor();
  const id = page.url().split('/').pop()!;
  t.is(await page.locator('h1').textContent(), NAME, 'the name is text');
  t.is(await page.locator('img[src=x]').count(), 0);
  const saved = await world.owner.client.request('GET', `/broadcasts/${id}`);
  t.is(saved.body.status, 'draft');
  t.is(saved.body.preview_text, 'News of the week');
  t.is(saved.body.segment_id, world.segment.id);
  await look(t, page, 'broadcast-composer');

  // Send now, with the keyboard.
  await page.getByRole('button', { name: 'Send now' }).focus();
  await page.keyboard.press('Enter');
  await page.locator('#counts-title').waitFor();
  await until(async () => (await page.locator('#broadcast-status').textContent()) === 'sent', {
    what: 'the broadcast sent',
    timeoutMs: 120_000,
    intervalMs: 250,
  });
  const n = world.readers.length;
  await until(async () => world.readers.every((r) => world.w.sink.deliveredTo(r.email).length === 1), {
    what: 'every message at the sink',
    timeoutMs: 120_000,
  });
  for (const r of world.readers) {
    const copies = world.w.sink.deliveredTo(r.email);
    t.is(copies.length, 1, r.email);
    const mail = await simpleParser(copies[0].raw);
    t.is(mail.subject, `Hello ${r.first_name}`);
    t.regex(String(mail.html), new RegExp(`Dear ${r.first_name}`));
  }
  // The report: delivered count (the page refreshes itself while it is on its way; once sent, a reload).
  await until(
    async () => {
      await page.reload();
      await page.locator('[data-count=delivered] dd').waitFor();
      return (await page.locator('[data-count=delivered] dd').textContent()) === String(n);
    },
    { what: 'all delivered in the report', timeoutMs: 60_000, intervalMs: 1000 },
  );
  t.is(await page.locator('[data-count=sent] dd').textContent(), String(n));
  await page.getByLabel('Show recipients').selectOption('delivered');
  await until(async () => (await page.locator('#recipients-table tbody tr').count()) === n, { what: 'the list' });
  t.deepEqual(
    (await page.locator('#recipients-table tbody tr td:first-child').allTextContents()).sort(),
    world.readers.map((r) => r.email).sort(),
  );
  await page.getByLabel('Show recipients').selectOption('bounced');
  await page.getByText('No recipient is bounced.').waitFor();
  await page.getByLabel('Show recipients').selectOption('delivered');
  await page.locator('#recipients-table').waitFor();
  await look(t, page, 'broadcast-report');

  await page.getByRole('link', { name: '← Broadcasts' }).click();
  const row = page.locator('tbody tr', { hasText: 'sent' });
  await row.waitFor();
  t.is(await row.locator('a').textContent(), NAME);
  await until(async () => /5 sent · 5 delivered/.test((await row.textContent()) ?? ''), { what: 'the row counts' });
  t.regex((await row.textContent()) ?? '', new RegExp(world.segment.name.replace(/[<>/]/g, '.')));
  await look(t, page, 'broadcasts');
  t.deepEqual(errorsOf(errors), []);
  await context.close();
});

test.serial(
  'blocks: failing checks refuse the send at the block; acknowledged, scheduled, canceled; duplicate and delete',
  async (t) => {
    t.timeout(180_000);
    const { page, context, errors } = await browse(world.browser, world.owner, 'America/New_York');
    await page.goto(`${world.w.p.url}/dashboard/broadcasts/new`);
    await page.locator('#details-title').waitFor();
    await compose(page, 'Checked', null);
    await page.locator('[data-block-select="text-1"]').click();
    await page.getByLabel('Text', { exact: true }).fill('Hi {{{NOT_A_PROPERTY}}}, and {{{FIRST_NAME|you}}}.');
    await until(async () => (await frameText(page)).includes('and Ada.'), {
      what: 'the block preview',
      timeoutMs: 20_000,
    });
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.waitForURL(/\/dashboard\/broadcasts\/[0-9a-f-]{36}$/);
    const id = page.url().split('/').pop()!;
    const saved = (await world.owner.client.request('GET', `/broadcasts/${id}`)).body;
    t.is(
      saved.document.blocks.find((b: { id: string }) => b.id === 'text-1').text,
      'Hi {{{NOT_A_PROPERTY}}}, and {{{FIRST_NAME|you}}}.',
    );
    await page.locator('[data-block-select="text-1"]').waitFor();
    await page.getByRole('button', { name: 'Send now' }).click();
    // The send's 422: its message, its failing checks in the checks panel pointing at the block, the acknowledgement.
    await page.locator('#save-error [role=alert]').waitFor();
    t.regex(await page.locator('.checks').first().innerText(), /NOT_A_PROPERTY/);
    t.true((await page.locator('[data-check-block="text-1"]').count()) > 0, 'the check names its block');
    t.is(await page.locator('[data-block-select="text-1"]').getAttribute('aria-expanded'), 'true', 'the block opened');
    const sendAnyway = page.getByRole('button', { name: 'Schedule' });
    await page.getByLabel('At a time').check();
    t.true(await sendAnyway.isDisabled(), 'no send before the acknowledgement');
    await page.getByLabel('Send at').fill('in 2 hours');
    await look(t, page, 'broadcast-checks-refused');
    // An edit brings back the preview's checks (the refusal was about other content); undone, the send's are back.
    await page.getByLabel('Preview text', { exact: true }).fill('Edited after the refusal');
    await until(async () => (await page.getByLabel(/I have read the findings/).count()) === 0, {
      what: 'refusal set aside',
    });
    await page.getByLabel('Preview text', { exact: true }).fill('');
    await page.getByLabel(/I have read the findings/).check();
    await sendAnyway.click();
    await page.locator('#counts-title').waitFor();
    t.is(await page.locator('#broadcast-status').textContent(), 'scheduled');
    const row = (await world.owner.client.request('GET', `/broadcasts/${id}`)).body;
    t.true(Math.abs(Date.parse(row.scheduled_at) - Date.now() - 2 * 3600_000) < 120_000, 'in two hours');
    // The time in the browser's timezone (New York here).
    const shown = new Intl.DateTimeFormat('en-US', {
      dateStyle: 'medium',
      timeStyle: 'medium',
      timeZone: 'America/New_York',
    }).format(new Date(row.scheduled_at));
    t.regex(
      await page.locator('.moves').innerText(),
      new RegExp(`Scheduled for ${shown.replace(/[.*+?^${}()|[\]\\]/g, '.')}`),
    );

    await page.getByRole('button', { name: 'Cancel broadcast' }).click();
    await until(async () => (await page.locator('#broadcast-status').textContent()) === 'canceled', {
      what: 'canceled',
    });
    t.is((await world.owner.client.request('GET', `/broadcasts/${id}`)).body.status, 'canceled');

    // Duplicate: a new draft in the composer; then deleted.
    await page.getByRole('button', { name: 'Duplicate' }).click();
    await page.locator('#send-title').waitFor();
    const copy = page.url().split('/').pop()!;
    t.not(copy, id);
    t.is(await page.getByLabel('Name', { exact: true }).inputValue(), 'Checked (copy)');
    await page.getByRole('button', { name: 'Delete draft' }).click();
    await answerConfirm(page, 'Delete the draft “Checked (copy)”?', 'Delete');
    await page.getByRole('heading', { name: 'Broadcasts' }).waitFor();
    t.is((await world.owner.client.request('GET', `/broadcasts/${copy}`)).status, 404);
    t.deepEqual(errorsOf(errors), []);
    await context.close();
  },
);

test.serial('a viewer reads broadcasts without send or edit actions; the api refuses their send', async (t) => {
  t.timeout(120_000);
  const draft = await world.owner.client.request('POST', '/broadcasts', {
    body: {
      name: 'For <i>viewers</i>',
      from: world.from,
      subject: 'Hi',
      html: '<p>Hi</p>',
      segment_id: world.segment.id,
    },
  });
  t.is(draft.status, 201);
  const { page, context, errors } = await browse(world.browser, world.viewer);
  await page.goto(`${world.w.p.url}/dashboard/broadcasts`);
  await page.getByRole('link', { name: 'For <i>viewers</i>' }).click();
  await page.locator('#details-title').waitFor();
  t.is(await page.getByRole('button', { name: 'Send now' }).count(), 0);
  t.is(await page.getByRole('button', { name: 'Save draft' }).count(), 0);
  t.is(await page.getByRole('button', { name: 'Delete draft' }).count(), 0);
  t.true(await page.getByLabel('Subject', { exact: true }).isDisabled());
  await page.getByText('Viewers read broadcasts').waitFor();
  await look(t, page, 'broadcast-viewer');
  await page.goto(`${world.w.p.url}/dashboard/broadcasts`);
  await page.locator('tbody tr').first().waitFor();
  t.is(await page.getByRole('link', { name: 'New broadcast' }).count(), 0);
  const send = await world.viewer.client.request('POST', `/broadcasts/${draft.body.id}/send`, { body: {} });
  t.is(send.status, 403);
  t.is((await world.owner.client.request('GET', `/broadcasts/${draft.body.id}`)).body.status, 'draft');
  t.deepEqual(errorsOf(errors), []);
  await context.close();
});

test.serial('a session that ends mid-edit: the sign-in-again dialog, the edits kept and saved', async (t) => {
  t.timeout(120_000);
  const draft = await world.owner.client.request('POST', '/broadcasts', {
    body: { name: 'Edited', from: world.from, subject: 'Hi', html: '<p>Hi</p>', segment_id: world.segment.id },
  });
  const { page, context } = await browse(world.browser, world.owner);
  await page.goto(`${world.w.p.url}/dashboard/broadcasts/${draft.body.id}`);
  await page.locator('#details-title').waitFor();
  await page.getByLabel('Subject', { exact: true }).fill('Kept through the sign-in');
  // The live preview of the edit is done first: the save, not the preview's request, finds the session ended.
  await page.locator('.preview-subject', { hasText: 'Kept through the sign-in' }).waitFor();
  await page.locator('.preview-panel [role=status]', { hasText: 'Up to date.' }).waitFor();
  await world.w.p.db('sessions').del();
  await page.getByRole('button', { name: 'Save draft' }).click();
  const dialog = page.getByRole('dialog', { name: 'Your session has ended' });
  await dialog.waitFor();
  await dialog.locator('input[name=password]').fill('a long dashboard password');
  await dialog.locator('button[type=submit]').click();
  await dialog.waitFor({ state: 'detached' });
  t.is(await page.getByLabel('Subject', { exact: true }).inputValue(), 'Kept through the sign-in');
  await page.getByRole('button', { name: 'Save draft' }).click();
  await page.getByText('Draft saved.').waitFor();
  const subject = await page.evaluate(
    (id) =>
      fetch(`/broadcasts/${id}`)
        .then((r) => r.json())
        .then((b: { subject: string }) => b.subject),
    draft.body.id as string,
  );
  t.is(subject, 'Kept through the sign-in');
  await context.close();
});
