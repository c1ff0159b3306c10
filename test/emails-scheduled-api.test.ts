// Scheduled sends through the API: scheduled_at read as phrases in UTC, reschedule and cancel until the release,
// which is run here directly at chosen instants (emails-scheduled.test.ts runs the real worker process).
import test from 'ava';
import { startSendingWorld, sendingTeam } from './helpers/sending.ts';
import type { Platform } from './helpers/platform.ts';
import type { DnsServer } from './helpers/dns-server.ts';
import { emailEventData } from '../shared/emails/present.ts';

let p: Platform;
let dns: DnsServer;
let close = async () => {};
test.before(async () => {
  ({ p, dns, close } = await startSendingWorld(['inbox-one.test', 'later-inbox.test']));
});
test.after.always(() => close());

// Serial: a release takes every team's due emails, so these two must not meet the other tests' scheduled sends (ava
// runs a file's serial tests before its concurrent ones).
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

test('scheduled_at through the API: refusals are 422 validation_error on scheduled_at and store nothing; phrases are read case-insensitively', async (t) => {
  const other = await sendingTeam(p, dns);
  const base = { from: `shop@${other.domain}`, to: 'gia@later-inbox.test', subject: 'Grammar', text: 'x' };
  // Clock-independent refusals (no phrase here is valid at any time of day).
  for (const phrase of [
    'next blue moon',
    'in 2 fortnights',
    'tomorrow at 13pm',
    'tomorrow at 9:60',
    'friday',
    'in 31 days',
    'in 5 weeks',
    '2001-01-01T00:00:00Z',
    'yesterday at 9am',
  ]) {
    const res = await p.request('POST', '/emails', { key: other.key, body: { ...base, scheduled_at: phrase } });
    t.is(res.status, 422, phrase);
    t.is(res.body.name, 'validation_error', phrase);
    t.is(res.body.errors?.[0]?.path, 'scheduled_at', phrase);
  }
  t.is(Number((await p.db('emails').where({ team_id: other.id }).count({ n: '*' }))[0].n), 0, 'nothing stored');

  const sent = Date.now();
  const res = await p.request('POST', '/emails', { key: other.key, body: { ...base, scheduled_at: 'IN 2 HRS' } });
  t.is(res.status, 200, res.text);
  const email = (await p.request('GET', `/emails/${res.body.id}`, { key: other.key })).body;
  t.is(email.last_event, 'scheduled');
  t.true(Math.abs(new Date(email.scheduled_at).getTime() - (sent + 2 * 3600_000)) < 60_000, email.scheduled_at);

  const bad = await p.request('PATCH', `/emails/${res.body.id}`, {
    key: other.key,
    body: { scheduled_at: 'tomorrow at 25' },
  });
  t.is(bad.status, 422);
  t.is(bad.body.name, 'validation_error');
  t.is(
    new Date((await p.db('emails').where({ id: res.body.id }).first()).scheduled_at).getTime(),
    new Date(email.scheduled_at).getTime(),
    'unchanged',
  );
  t.is((await p.request('POST', `/emails/${res.body.id}/cancel`, { key: other.key })).status, 200);
});
