// The bulk rule (BULK_DAILY_LIMIT, here 3): the same message without a real unsubscribe link reaches at most that
// many people a day, in single sends and in batches.
import test from 'ava';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { startSendingWorld, sendingTeam } from './helpers/sending.ts';
import type { Platform } from './helpers/platform.ts';
import type { DnsServer } from './helpers/dns-server.ts';

let p: Platform;
let dns: DnsServer;
let close = async () => {};
test.before(async () => {
  ({ p, dns, close } = await startSendingWorld(['inbox-one.test'], { BULK_DAILY_LIMIT: '3' }));
});
test.after.always(() => close());

test('the bulk rule: the same message without an unsubscribe link reaches at most BULK_DAILY_LIMIT people a day', async (t) => {
  const team = await sendingTeam(p, dns);
  const body = (to: string, html: string) => ({ from: `news@${team.domain}`, to, subject: 'Big news', html });
  for (const n of [1, 2, 3])
    t.is(
      (await p.request('POST', '/emails', { key: team.key, body: body(`r${n}@inbox-one.test`, '<p>News</p>') })).status,
      200,
    );
  const refused = await p.request('POST', '/emails', { key: team.key, body: body('r4@inbox-one.test', '<p>News</p>') });
  t.is(refused.status, 422);
  t.like(refused.body.details, { reason: 'bulk_requires_unsubscribe', docs_url: p.config.BULK_DOCS_URL });
  const withLink = await p.request('POST', '/emails', {
    key: team.key,
    body: body('r4@inbox-one.test', '<p>News</p><a href="https://x.test/u">Unsubscribe</a>'),
  });
  t.is(withLink.status, 200);
});

test('the bulk rule wants a link, not the word: an http(s) or mailto link that says unsubscribe, a URL on its line in text, or List-Unsubscribe', async (t) => {
  const team = await sendingTeam(p, dns);
  // Four people in one send: past BULK_DAILY_LIMIT (3) unless the message carries a way to unsubscribe.
  const to = ['w1@inbox-one.test', 'w2@inbox-one.test', 'w3@inbox-one.test', 'w4@inbox-one.test'];
  const send = (content: Record<string, unknown>, recipients = to) =>
    p.request('POST', '/emails', {
      key: team.key,
      body: { from: `news@${team.domain}`, to: recipients, subject: 'Words', ...content },
    });
  // The word alone: three people, one at a time, then the fourth is refused.
  const bare = { html: '<p>Big news. Reply STOP to unsubscribe.</p>' };
  for (const r of to.slice(0, 3)) t.is((await send(bare, [r])).status, 200);
  const fourth = await send(bare, [to[3]]);
  t.is(fourth.status, 422, fourth.text);
  t.like(fourth.body, { name: 'validation_error', details: { reason: 'bulk_requires_unsubscribe' } });
  const refused: Record<string, unknown>[] = [
    { html: '<p>Reply STOP to unsubscribe</p>' },
    { text: 'You cannot unsubscribe from this list.' },
    { html: '<p>News</p>', text: 'To unsubscribe, write to us.\nhttps://shop.test/' },
    {
      html: '<a href="#">Unsubscribe</a> <a name="unsubscribe">here</a> <a href="javascript:unsubscribe()">or here</a>',
    },
    { html: '<p>You can unsubscribe.</p><a href="https://shop.test/">Shop</a>' },
    // The text made from this html puts the shop's URL on the word's line; only the html counts.
    { html: '<p>Reply STOP to unsubscribe, or visit <a href="https://shop.test/">our shop</a></p>' },
  ];
  for (const content of refused) {
    const res = await send(content);
    t.is(res.status, 422, JSON.stringify(content));
    t.is(res.body.details?.reason, 'bulk_requires_unsubscribe', JSON.stringify(content));
  }
  const accepted: Record<string, unknown>[] = [
    { html: '<p>News</p><a href="https://shop.test/u?id=1"><b>Unsubscribe</b></a>' },
    { html: "<p>News</p><A HREF='https://shop.test/unsubscribe?id=2'>Manage your preferences</A>" },
    { html: '<p>News</p><a class="x" href="mailto:leave@shop.test">Se d&eacute;sinscrire</a>' },
    { html: '<p>News</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Leave</a>' },
    { html: '<p>News</p>', text: 'News\nTo unsubscribe: https://shop.test/leave' },
    { text: 'News\nhttps://shop.test/abmelden?u=3' },
    { text: 'News. Leave: {{{RESEND_UNSUBSCRIBE_URL}}}' },
    { text: 'Reply STOP to unsubscribe', headers: { 'list-unsubscribe': '<mailto:leave@shop.test>' } },
  ];
  for (const content of accepted) t.is((await send(content)).status, 200, JSON.stringify(content));
  t.is((await p.db('emails').where({ team_id: team.id })).length, 3 + accepted.length);
});

test('the bulk rule in a batch: permissive reports the refused email and sends the rest; strict refuses all, naming it; no blob is left', async (t) => {
  const team = await sendingTeam(p, dns);
  const news = (to: string[], attachment?: string) => ({
    from: `news@${team.domain}`,
    to,
    subject: 'Batch news',
    html: '<p>Batch news</p>',
    ...(attachment
      ? { attachments: [{ filename: 'n.txt', content: Buffer.from(attachment).toString('base64') }] }
      : {}),
  });
  const other = { from: `news@${team.domain}`, to: ['solo@inbox-one.test'], subject: 'Something else', text: 'hi' };
  // The team's blobs (emails/<team>/<email>/...): only the refused item has an attachment.
  const blobs = () => readdir(path.join(p.config.BLOB_DIR, 'emails', team.id), { recursive: true }).catch(() => []);

  // Item 1 would reach 4 people with the same message: past BULK_DAILY_LIMIT (3).
  const batch = [
    other,
    news(['n1@inbox-one.test', 'n2@inbox-one.test', 'n3@inbox-one.test', 'n4@inbox-one.test'], 'refused'),
  ];
  const strict = await p.request('POST', '/emails/batch', { key: team.key, body: batch });
  t.is(strict.status, 422, strict.text);
  t.like(strict.body, { name: 'validation_error', details: { reason: 'bulk_requires_unsubscribe', index: 1 } });
  t.regex(strict.body.message, /^Email 1: /);
  t.is((await p.db('emails').where({ team_id: team.id })).length, 0, 'strict: nothing sent');
  t.deepEqual(
    (await blobs()).filter((f) => f.endsWith('attachment-0')),
    [],
    'strict: no blob left',
  );

  const permissive = await p.request('POST', '/emails/batch', {
    key: team.key,
    body: batch,
    headers: { 'x-batch-validation': 'permissive', 'idempotency-key': 'bulk-batch' },
  });
  t.is(permissive.status, 200, permissive.text);
  t.is(permissive.body.data.length, 1);
  t.like(permissive.body.errors, [{ index: 1 }]);
  t.regex(permissive.body.errors[0].message, /unsubscribe/);
  const sent = await p.db('emails').where({ team_id: team.id });
  t.deepEqual(
    sent.map((e) => [e.id, e.subject]),
    [[permissive.body.data[0].id, 'Something else']],
  );
  t.deepEqual(
    (await blobs()).filter((f) => f.endsWith('attachment-0')),
    [],
    "the refused email's attachment is gone",
  );
  const replay = await p.request('POST', '/emails/batch', {
    key: team.key,
    body: batch,
    headers: { 'x-batch-validation': 'permissive', 'idempotency-key': 'bulk-batch' },
  });
  t.deepEqual(replay.body, permissive.body, 'the stored answer, errors included');
  t.is((await p.db('emails').where({ team_id: team.id })).length, 1);

  // One send refused the same way leaves no blob either.
  const single = await p.request('POST', '/emails', {
    key: team.key,
    body: news(['s1@inbox-one.test', 's2@inbox-one.test', 's3@inbox-one.test', 's4@inbox-one.test'], 'single'),
  });
  t.is(single.status, 422, single.text);
  t.deepEqual(
    (await blobs()).filter((f) => f.endsWith('attachment-0')),
    [],
  );
});
