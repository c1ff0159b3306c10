import test from 'ava';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startDnsServer, type DnsServer } from './helpers/dns-server.ts';
import { mailDomain, sendingTeam } from './helpers/sending.ts';
import { emailEventData } from '../shared/emails/present.ts';

let p: Platform;
let dns: DnsServer;
test.before(async () => {
  dns = await startDnsServer();
  p = await startPlatform({ DNS_SERVERS: dns.address, BULK_DAILY_LIMIT: '3' });
  mailDomain(dns, 'inbox-one.test');
  mailDomain(dns, 'inbox-two.test');
  dns.set('nullmx.test', 'MX', [{ exchange: '.', priority: 0 }]);
});
test.after.always(async () => {
  await p?.close();
  await dns?.close();
});

test('POST /emails commits the email, its recipients and attachments, then enqueues its delivery', async (t) => {
  const team = await sendingTeam(p, dns);
  const res = await p.request('POST', '/emails', {
    key: team.key,
    body: {
      from: `Acme Support <support@${team.domain}>`,
      to: ['ann@inbox-one.test', 'Bob <bob@inbox-two.test>'],
      cc: 'carol@inbox-one.test',
      bcc: ['ann@inbox-one.test'],
      reply_to: 'help@inbox-one.test',
      subject: 'Your receipt',
      html: '<p>Thanks! <a href="https://acme.test/r/1">Receipt</a></p>',
      headers: { 'X-Entity-Ref-ID': 'abc-123' },
      tags: [{ name: 'category', value: 'receipt' }],
      attachments: [
        { filename: 'r.txt', content: Buffer.from('hello').toString('base64') },
        { filename: 'logo.png', content: { type: 'Buffer', data: [137, 80, 78, 71] }, content_id: 'logo' },
      ],
    },
  });
  t.is(res.status, 200, res.text);
  t.regex(res.body.id, /^[0-9a-f-]{36}$/);

  const email = await p.db('emails').where({ id: res.body.id }).first();
  t.like(email, {
    team_id: team.id,
    status: 'queued',
    last_event: 'sent',
    from: `Acme Support <support@${team.domain}>`,
    from_address: `support@${team.domain}`,
    subject: 'Your receipt',
  });
  // Its first event is committed with it, before the answer and before any mta has seen it.
  const events = await p
    .db('events')
    .whereRaw(`data->>'email_id' = ?`, [res.body.id])
    .select('type', 'data', 'team_id');
  t.deepEqual(events, [{ type: 'email.sent', team_id: team.id, data: emailEventData(email) }]);
  t.is(email.message_id, `<${res.body.id}@${team.domain}>`);
  t.is(email.text, 'Thanks! Receipt (https://acme.test/r/1)');
  const recipients = await p.db('email_recipients').where({ email_id: res.body.id }).orderBy('address');
  t.deepEqual(
    recipients.map((r) => [r.address, r.kind, r.status]),
    [
      ['ann@inbox-one.test', 'to', 'queued'],
      ['bob@inbox-two.test', 'to', 'queued'],
      ['carol@inbox-one.test', 'cc', 'queued'],
    ],
  );
  const attachments = await p.db('email_attachments').where({ email_id: res.body.id }).orderBy('position');
  t.deepEqual(
    attachments.map((a) => [a.filename, a.content_type, a.content_disposition, a.content_id, a.size]),
    [
      ['r.txt', 'text/plain', 'attachment', null, 5],
      ['logo.png', 'image/png', 'inline', 'logo', 4],
    ],
  );
  t.deepEqual(await p.deps.blobs.get(attachments[0].blob_key), Buffer.from('hello'));
  const job = await p.deliverQueue.getJob(res.body.id);
  t.deepEqual(job?.data, { emailId: res.body.id });

  const got = await p.request('GET', `/emails/${res.body.id}`, { key: team.key });
  t.like(got.body, {
    object: 'email',
    id: res.body.id,
    last_event: 'sent',
    cc: ['carol@inbox-one.test'],
    reply_to: ['help@inbox-one.test'],
    scheduled_at: null,
  });
  const list = await p.request('GET', '/emails', { key: team.key });
  t.is(list.body.data[0].id, res.body.id);
  t.is(list.body.data[0].html, undefined);
});

test("the sender domain must be the team's, verified, and the key's own when the key is bound", async (t) => {
  const team = await sendingTeam(p, dns);
  const other = await sendingTeam(p, dns);
  const body = (from: string) => ({ from, to: 'ann@inbox-one.test', subject: 'x', text: 'x' });
  for (const from of [`a@${other.domain}`, 'a@unknown-sender.test']) {
    const res = await p.request('POST', '/emails', { key: team.key, body: body(from) });
    t.is(res.status, 403, from);
    t.is(res.body.name, 'validation_error');
  }
  const second = await p.request('POST', '/domains', { key: team.key, body: { name: `second-${team.domain}` } });
  const bound = await p.request('POST', '/api-keys', {
    key: team.key,
    body: { name: 'b', permission: 'sending_access', domain_id: second.body.id },
  });
  const refused = await p.request('POST', '/emails', { key: bound.body.token, body: body(`a@${team.domain}`) });
  t.is(refused.status, 403);
  t.regex(refused.body.message, /only send from its own domain/);
});

test("the sandbox reaches only verified identities, the team's domains and the simulator", async (t) => {
  const team = await sendingTeam(p, dns, { sandbox: true });
  mailDomain(dns, team.domain);
  const res = await p.request('POST', '/emails', {
    key: team.key,
    body: { from: `a@${team.domain}`, to: 'stranger@inbox-one.test', subject: 'x', text: 'x' },
  });
  t.is(res.status, 403);
  t.is(res.body.name, 'validation_error');
  t.deepEqual(res.body.details, {
    recipient: 'stranger@inbox-one.test',
    region: 'us-east-1',
    allowed: ['verified_identity', 'verified_domain', 'simulator'],
  });
  for (const to of [`delivered@${p.config.SIMULATOR_DOMAIN}`, `someone@${team.domain}`]) {
    const ok = await p.request('POST', '/emails', {
      key: team.key,
      body: { from: `a@${team.domain}`, to, subject: 'x', text: 'x' },
    });
    t.is(ok.status, 200, `${to}: ${ok.text}`);
  }
  await p.db('team_identities').insert({ team_id: team.id, email: 'stranger@inbox-one.test' });
  t.is(
    (
      await p.request('POST', '/emails', {
        key: team.key,
        body: { from: `a@${team.domain}`, to: 'stranger@inbox-one.test', subject: 'x', text: 'x' },
      })
    ).status,
    200,
  );
});

test('the managed domain sends only to verified identities and the simulator', async (t) => {
  const team = await p.createTeam();
  const managed = (await p.request('GET', '/domains', { key: team.key })).body.data[0].name;
  await p.db('teams').where({ id: team.id }).update({ sandbox_regions: '{}' });
  const refused = await p.request('POST', '/emails', {
    key: team.key,
    body: { from: `me@${managed}`, to: 'x@inbox-one.test', subject: 'x', text: 'x' },
  });
  t.is(refused.status, 403);
  t.deepEqual(refused.body.details.allowed, ['verified_identity', 'simulator']);
  const sim = await p.request('POST', '/emails', {
    key: team.key,
    body: { from: `me@${managed}`, to: `delivered@${p.config.SIMULATOR_DOMAIN}`, subject: 'x', text: 'x' },
  });
  t.is(sim.status, 200, sim.text);
});

test('recipients that cannot receive mail: 422 when all are unusable, dropped when some are', async (t) => {
  const team = await sendingTeam(p, dns);
  const send = (to: string[]) =>
    p.request('POST', '/emails', { key: team.key, body: { from: `a@${team.domain}`, to, subject: 'x', text: 'x' } });
  const cases: [string, string, Record<string, unknown>?][] = [
    ['a@example.com', 'reserved_domain'],
    ['a@foo.invalid', 'reserved_domain'],
    ['a@gmial.com', 'typo_domain', { suggestion: 'gmail.com' }],
    ['a@nullmx.test', 'no_mail'],
    ['a@no-such-domain-here.test', 'no_mail'],
  ];
  for (const [to, cause, extra] of cases) {
    const res = await send([to]);
    t.is(res.status, 422, to);
    t.like(res.body.details, { reason: 'invalid_recipient', cause, ...(extra ?? {}) }, to);
  }
  await p.db('suppressions').insert({
    id: '01a20175-0000-7000-8000-000000000001',
    team_id: (await p.createTeam()).id,
    email: 'gone@inbox-two.test',
    origin: 'bounce',
  });
  t.like((await send(['gone@inbox-two.test'])).body.details, { cause: 'dead_address' });

  const mixed = await send(['ok@inbox-one.test', 'a@example.com']);
  t.is(mixed.status, 200);
  const rows = await p.db('email_recipients').where({ email_id: mixed.body.id }).orderBy('address');
  t.deepEqual(
    rows.map((r) => [r.address, r.status, r.last_response]),
    [
      ['a@example.com', 'failed', 'reserved_domain'],
      ['ok@inbox-one.test', 'queued', null],
    ],
  );
});

test('suppressed recipients are not sent to and email.suppressed is recorded', async (t) => {
  const team = await sendingTeam(p, dns);
  await p.request('POST', '/suppressions', { key: team.key, body: { email: 'blocked@inbox-one.test' } });
  const res = await p.request('POST', '/emails', {
    key: team.key,
    body: { from: `a@${team.domain}`, to: ['Blocked@inbox-one.test', 'fine@inbox-one.test'], subject: 'x', text: 'x' },
  });
  t.is(res.status, 200, res.text);
  const rows = await p.db('email_recipients').where({ email_id: res.body.id }).orderBy('address');
  t.deepEqual(
    rows.map((r) => r.status),
    ['suppressed', 'queued'],
  );
  const event = await p.db('events').where({ team_id: team.id, type: 'email.suppressed' }).first();
  // The entry's origin is the reason: added by hand here.
  t.like(event.data, {
    email_id: res.body.id,
    to: ['Blocked@inbox-one.test'],
    suppressed: { type: 'OnAccountSuppressionList', reason: 'manual' },
  });
});

test('bad input is refused with a clear 422 and nothing is stored', async (t) => {
  const team = await sendingTeam(p, dns);
  const base = { from: `a@${team.domain}`, to: 'ann@inbox-one.test', subject: 'x', text: 'x' };
  const cases: [Record<string, unknown>, number, string, string?][] = [
    [{ ...base, from: 'not an address' }, 422, 'validation_error', 'from'],
    [{ ...base, to: 'ann@inbox-one.test\r\nBcc: evil@x.test' }, 422, 'validation_error', 'to'],
    [{ ...base, subject: 'Hi\r\nBcc: evil@x.test' }, 422, 'validation_error', 'subject'],
    [{ ...base, headers: { 'X-Ok': 'a\r\nBcc: evil@x.test' } }, 422, 'validation_error', 'headers.X-Ok'],
    [{ ...base, headers: { From: 'x@y.z' } }, 422, 'validation_error', 'headers.From'],
    [{ ...base, headers: { 'Bad Name': 'v' } }, 422, 'validation_error', 'headers.Bad Name'],
    [{ ...base, to: Array.from({ length: 51 }, (_, i) => `r${i}@inbox-one.test`) }, 422, 'validation_error', 'to'],
    [
      {
        ...base,
        to: Array.from({ length: 20 }, (_, i) => `t${i}@inbox-one.test`),
        cc: Array.from({ length: 20 }, (_, i) => `c${i}@inbox-one.test`),
        bcc: Array.from({ length: 11 }, (_, i) => `b${i}@inbox-one.test`),
      },
      422,
      'validation_error',
      'to',
    ],
    [
      { ...base, attachments: [{ filename: 'a.bin', content: 'not*base64!' }] },
      422,
      'invalid_attachment',
      'attachments.0.content',
    ],
    [{ ...base, attachments: [{ filename: 'a.bin' }] }, 422, 'invalid_attachment', 'attachments.0'],
    [{ ...base, tags: [{ name: 'bad tag', value: 'x' }] }, 422, 'validation_error', 'tags.0.name'],
    [{ ...base, scheduled_at: 'next blue moon' }, 422, 'validation_error', 'scheduled_at'],
    [{ ...base, scheduled_at: '2001-01-01T00:00:00Z' }, 422, 'validation_error', 'scheduled_at'],
    [{ ...base, scheduled_at: 'in 31 days' }, 422, 'validation_error', 'scheduled_at'],
    [{ ...base, template: { id: 'tmpl_missing' } }, 422, 'validation_error', 'template.id'],
    [{ from: base.from, to: base.to, text: 'x' }, 422, 'missing_required_field'],
    [{ ...base, text: undefined }, 422, 'missing_required_field'],
  ];
  const before = await p.db('emails').where({ team_id: team.id }).count({ n: '*' });
  for (const [body, status, name, path] of cases) {
    const res = await p.request('POST', '/emails', { key: team.key, body });
    t.is(res.status, status, JSON.stringify(body).slice(0, 120));
    t.is(res.body.name, name, JSON.stringify(body).slice(0, 120));
    if (path) t.is(res.body.errors?.[0]?.path, path, JSON.stringify(body).slice(0, 120));
  }
  t.deepEqual(await p.db('emails').where({ team_id: team.id }).count({ n: '*' }), before);
});

// Serial: a release takes every team's due emails, so these two must not meet the other tests' scheduled sends.
test.serial(
  'scheduled sends: phrases in UTC, reschedule and cancel until released; the release job frees them on time',
  async (t) => {
    const { releaseScheduled } = await import('../worker/sending.ts');
    const team = await sendingTeam(p, dns);
    const res = await p.request('POST', '/emails', {
      key: team.key,
      body: {
        from: `a@${team.domain}`,
        to: 'ann@inbox-one.test',
        subject: 'later',
        text: 'x',
        scheduled_at: 'in 2 hours',
      },
    });
    t.is(res.status, 200, res.text);
    let email = (await p.request('GET', `/emails/${res.body.id}`, { key: team.key })).body;
    t.is(email.last_event, 'scheduled');
    t.true(Math.abs(new Date(email.scheduled_at).getTime() - (Date.now() + 7200_000)) < 10_000);
    t.is(await p.deliverQueue.getJob(res.body.id), undefined, 'not handed to the MTA before its time');
    t.truthy(await p.db('events').where({ team_id: team.id, type: 'email.scheduled' }).first());

    const moved = await p.request('PATCH', `/emails/${res.body.id}`, {
      key: team.key,
      body: { scheduled_at: 'tomorrow at 9am' },
    });
    t.deepEqual(moved.body, { object: 'email', id: res.body.id });
    email = (await p.request('GET', `/emails/${res.body.id}`, { key: team.key })).body;
    t.is(new Date(email.scheduled_at).getUTCHours(), 9);

    // Released at its time (the worker passes `now`), exactly once.
    const at = new Date(new Date(email.scheduled_at).getTime() + 10);
    const released = await releaseScheduled(p.db, p.deps.enqueueDelivery, at);
    t.true(released >= 1);
    const releasedRow = await p.db('emails').where({ id: res.body.id }).first();
    t.like(releasedRow, { status: 'queued', last_event: 'sent' });
    const events = await p
      .db('events')
      .whereRaw(`data->>'email_id' = ?`, [res.body.id])
      .orderBy('id')
      .select('type', 'data');
    t.deepEqual(
      events.map((e) => e.type),
      ['email.scheduled', 'email.scheduled', 'email.sent'],
      'scheduled, rescheduled, then sent at its release',
    );
    t.deepEqual(events[2].data, emailEventData(releasedRow));
    t.truthy(await p.deliverQueue.getJob(res.body.id));
    await releaseScheduled(p.db, p.deps.enqueueDelivery, at);
    t.is(
      (await p.db('events').whereRaw(`data->>'email_id' = ?`, [res.body.id]).where({ type: 'email.sent' })).length,
      1,
      'released once',
    );
    const late = await p.request('POST', `/emails/${res.body.id}/cancel`, { key: team.key });
    t.is(late.status, 422);

    const second = await p.request('POST', '/emails', {
      key: team.key,
      body: {
        from: `a@${team.domain}`,
        to: 'ann@inbox-one.test',
        subject: 'never',
        text: 'x',
        scheduled_at: new Date(Date.now() + 3600_000).toISOString(),
      },
    });
    const canceled = await p.request('POST', `/emails/${second.body.id}/cancel`, { key: team.key });
    t.deepEqual(canceled.body, { object: 'email', id: second.body.id });
    t.is((await p.request('GET', `/emails/${second.body.id}`, { key: team.key })).body.last_event, 'canceled');
    t.is(await releaseScheduled(p.db, p.deps.enqueueDelivery, new Date(Date.now() + 2 * 3600_000)), 0);
  },
);

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

test('daily and monthly quotas: 429 once reached', async (t) => {
  const team = await sendingTeam(p, dns);
  await p.db('teams').where({ id: team.id }).update({ daily_send_limit: 2 });
  const send = () =>
    p.request('POST', '/emails', {
      key: team.key,
      body: { from: `a@${team.domain}`, to: 'q@inbox-one.test', subject: `q${Math.random()}`, text: 'x' },
    });
  t.is((await send()).status, 200);
  t.is((await send()).status, 200);
  const refused = await send();
  t.is(refused.status, 429);
  t.is(refused.body.name, 'daily_quota_exceeded');
  await p.db('teams').where({ id: team.id }).update({ daily_send_limit: null, monthly_send_limit: 2 });
  t.is((await send()).body.name, 'monthly_quota_exceeded');
});

test('Idempotency-Key on POST /emails: a retry replays the answer and sends nothing again', async (t) => {
  const team = await sendingTeam(p, dns);
  const body = { from: `a@${team.domain}`, to: 'idem@inbox-one.test', subject: 'once', text: 'x' };
  const headers = { 'idempotency-key': 'order-42' };
  const first = await p.request('POST', '/emails', { key: team.key, body, headers });
  const second = await p.request('POST', '/emails', { key: team.key, body, headers });
  t.deepEqual(second.body, first.body);
  t.is(second.headers.get('idempotent-replayed'), 'true');
  t.is((await p.db('emails').where({ team_id: team.id }).count({ n: '*' }))[0].n, 1);
  const row = await p.db('idempotency_keys').where({ team_id: team.id, key: 'order-42' }).first();
  t.is(row.status, 'done');
  t.deepEqual(row.response_body, first.body);
});

test('POST /emails/batch: strict refuses the whole batch on one error; permissive sends the valid ones', async (t) => {
  const team = await sendingTeam(p, dns);
  const good = (n: number) => ({ from: `a@${team.domain}`, to: `b${n}@inbox-one.test`, subject: `b${n}`, text: 'x' });
  const bad = { from: `a@${team.domain}`, to: 'not-an-address', subject: 'bad', text: 'x' };
  const strict = await p.request('POST', '/emails/batch', { key: team.key, body: [good(1), bad] });
  t.is(strict.status, 422);
  t.is(strict.body.details.index, 1);
  t.is((await p.db('emails').where({ team_id: team.id }).count({ n: '*' }))[0].n, 0);
  const permissive = await p.request('POST', '/emails/batch', {
    key: team.key,
    body: [good(1), bad, good(2)],
    headers: { 'x-batch-validation': 'permissive' },
  });
  t.is(permissive.status, 200, permissive.text);
  t.is(permissive.body.data.length, 2);
  t.deepEqual(
    permissive.body.errors.map((e: { index: number }) => e.index),
    [1],
  );
  const ok = await p.request('POST', '/emails/batch', { key: team.key, body: [good(3), good(4)] });
  t.is(ok.body.data.length, 2);
  t.is(ok.body.errors, undefined);
  t.is((await p.request('POST', '/emails/batch', { key: team.key, body: [] })).status, 422);
  t.is(
    (await p.request('POST', '/emails/batch', { key: team.key, body: Array.from({ length: 101 }, (_, i) => good(i)) }))
      .status,
    422,
  );
});

test.serial('the release takes every due email, a batch at a time', async (t) => {
  const { releaseScheduled } = await import('../worker/sending.ts');
  const team = await sendingTeam(p, dns);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await p.request('POST', '/emails', {
      key: team.key,
      body: {
        from: `a@${team.domain}`,
        to: 'ann@inbox-one.test',
        subject: `batch ${i}`,
        text: 'x',
        scheduled_at: 'in 3 hours',
      },
    });
    t.is(res.status, 200, res.text);
    ids.push(res.body.id);
  }
  const at = new Date(Date.now() + 4 * 3600_000);
  t.true((await releaseScheduled(p.db, p.deps.enqueueDelivery, at, 2)) >= 5, 'batches of 2 until none is left');
  const rows = await p.db('emails').whereIn('id', ids).select('status');
  t.deepEqual(
    rows.map((r) => r.status),
    ids.map(() => 'queued'),
  );
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
