// POST /emails and /emails/batch: what an accepted send commits and enqueues, the input refused, the quotas and
// Idempotency-Key.
import test from 'ava';
import { startSendingWorld, sendingTeam } from './helpers/sending.ts';
import type { Platform } from './helpers/platform.ts';
import type { DnsServer } from './helpers/dns-server.ts';
import { emailEventData } from '../shared/emails/present.ts';

let p: Platform;
let dns: DnsServer;
let close = async () => {};
test.before(async () => {
  ({ p, dns, close } = await startSendingWorld(['inbox-one.test', 'inbox-two.test']));
});
test.after.always(() => close());

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
    [{ ...base, template: { id: 'tmpl_missing' } }, 422, 'validation_error', 'text'],
    [{ ...base, text: undefined, template: { id: 'tmpl_missing' } }, 422, 'validation_error', 'template.id'],
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
  // An item that is not an object is one bad item too.
  const odd = await p.request('POST', '/emails/batch', {
    key: team.key,
    body: [good(5), 'not an email', null],
    headers: { 'x-batch-validation': 'permissive' },
  });
  t.is(odd.status, 200, odd.text);
  t.is(odd.body.data.length, 1);
  t.deepEqual(
    odd.body.errors.map((e: { index: number }) => e.index),
    [1, 2],
  );
  t.is(odd.body.errors[0].message, 'The item is not an object: give an email as POST /emails takes it.');
  const oddStrict = await p.request('POST', '/emails/batch', { key: team.key, body: [good(6), 42] });
  t.like(oddStrict, {
    status: 422,
    body: {
      name: 'validation_error',
      message: 'Email 1: The item is not an object: give an email as POST /emails takes it.',
      details: { index: 1 },
    },
  });
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
