// Webhook delivery over time: retries on the schedule, then failed and parked; a disabled endpoint parking its
// events; the order per endpoint; a receiver that goes away and comes back; a slow endpoint delaying no other.
// The jobs are driven by calling them with a clock (`now`), never by waiting on timers; serial, since fan-out and
// delivery are platform-wide.
import test from 'ava';
import { startWebhookWorld, verifyAsCustomers, type WebhookWorld } from './helpers/webhook-world.ts';
import { fanOutSettled, payloadOf } from '../shared/webhooks/fanout.ts';
import { deliverDue, deliveryPool, MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../shared/webhooks/deliver.ts';
import { deliverParked } from '../shared/webhooks/deliveries.ts';
import { findEndpoint } from '../shared/webhooks/endpoints.ts';
import { createAgents } from '../shared/webhooks/target.ts';
import { until } from './helpers/wait.ts';

let w: WebhookWorld;
test.before(async () => {
  w = await startWebhookWorld();
});
test.after.always(() => w?.close());

test.serial('a 500 then a 200: success after 2 attempts, the retry scheduled immediately', async (t) => {
  const r = await w.receiver([500, 200]);
  const { id, signing_secret } = await w.createEndpoint(r.url, ['suppression.added']);
  await w.p.request('POST', '/suppressions', { key: w.team.key, body: { email: 'retry@example.com' } });
  await w.run();
  t.is(r.received.length, 2);
  t.is(r.received[0].headers['webhook-id'], r.received[1].headers['webhook-id']);
  t.is(r.received[0].body, r.received[1].body);
  for (const got of r.received) verifyAsCustomers(t, signing_secret, got);
  const eventId = r.received[0].headers['webhook-id'] as string;
  const event = (await w.p.request('GET', `/webhooks/${id}/events/${eventId}`, { key: w.team.key })).body;
  t.like(event, { status: 'success', attempt_count: 2, last_http_status: 200 });
  const attempts = (await w.p.request('GET', `/webhooks/${id}/events/${eventId}/attempts`, { key: w.team.key })).body
    .data;
  t.deepEqual(
    attempts.map((a: { attempt_number: number; http_status_code: number }) => [a.attempt_number, a.http_status_code]),
    [
      [2, 200],
      [1, 500],
    ],
  );
  t.is(attempts[1].error, 'HTTP 500');
  t.is(attempts[1].response, 'answered 500');
});

test.serial('every retry on the schedule, then failed and parked; deliver-parked hands it back', async (t) => {
  const r = await w.receiver([503]);
  const { id } = await w.createEndpoint(r.url, ['suppression.added']);
  await w.p.request('POST', '/suppressions', { key: w.team.key, body: { email: 'down@example.com' } });
  let now = new Date();
  await w.run(now);
  // The first attempt and the immediate retry; then one attempt per step of the schedule.
  t.is(r.received.length, 2);
  for (const delay of RETRY_DELAYS_MS.slice(1)) {
    const delivery = await w.p.db('webhook_deliveries').where({ endpoint_id: id }).first();
    t.is(delivery.status, 'attempting');
    t.true(delivery.next_attempt_at.getTime() - now.getTime() >= delay, `next attempt ${delay} ms later`);
    // Not before its time.
    await w.run(new Date(delivery.next_attempt_at.getTime() - 1));
    const before = r.received.length;
    now = delivery.next_attempt_at;
    await w.run(now);
    t.is(r.received.length, before + 1);
  }
  t.is(r.received.length, MAX_ATTEMPTS);
  const delivery = await w.p.db('webhook_deliveries').where({ endpoint_id: id }).first();
  t.like(delivery, {
    status: 'failed',
    parked: true,
    attempt_count: MAX_ATTEMPTS,
    last_http_status: 503,
    next_attempt_at: null,
  });
  const parked = await w.p.request('GET', `/webhooks/${id}/parked`, { key: w.team.key });
  t.deepEqual(
    parked.body.data.map((e: { id: string }) => e.id),
    [delivery.id],
  );

  r.script.splice(0, r.script.length, 200);
  const handed = await w.p.request('POST', `/webhooks/${id}/parked/deliver`, { key: w.team.key });
  t.deepEqual(handed.body, { object: 'parked_delivery', delivered: 1, remaining: 0, stopped_reason: null });
  await w.run(new Date(now.getTime() + 1000));
  t.like(await w.p.db('webhook_deliveries').where({ id: delivery.id }).first(), { status: 'success', parked: false });
});

test.serial('a disabled endpoint parks its events; enabled again, they go in bounded calls', async (t) => {
  const r = await w.receiver();
  const { id, signing_secret } = await w.createEndpoint(r.url, ['suppression.added']);
  await w.p.request('PATCH', `/webhooks/${id}`, { key: w.team.key, body: { status: 'disabled' } });
  for (const n of [1, 2, 3])
    await w.p.request('POST', '/suppressions', { key: w.team.key, body: { email: `parked${n}@example.com` } });
  await w.run();
  t.is(r.received.length, 0);
  const parked = await w.p.request('GET', `/webhooks/${id}/parked`, { key: w.team.key });
  t.is(parked.body.data.length, 3);
  t.like(parked.body.data[0], { status: 'pending', attempt_count: 0, last_http_status: null });

  const refused = await w.p.request('POST', `/webhooks/${id}/parked/deliver`, { key: w.team.key });
  t.is(refused.status, 422);
  await w.p.request('PATCH', `/webhooks/${id}`, { key: w.team.key, body: { status: 'enabled' } });
  const endpoint = (await findEndpoint(w.p.db, w.team.id, id))!;
  t.deepEqual(await deliverParked(w.p.db, endpoint, new Date(), 2), {
    delivered: 2,
    remaining: 1,
    stopped_reason: 'rate_limit_exceeded',
  });
  const rest = await w.p.request('POST', `/webhooks/${id}/parked/deliver`, { key: w.team.key });
  t.deepEqual(rest.body, { object: 'parked_delivery', delivered: 1, remaining: 0, stopped_reason: null });
  await w.run();
  t.deepEqual(
    r.received.map((x) => JSON.parse(x.body).data.email),
    ['parked1@example.com', 'parked2@example.com', 'parked3@example.com'],
  );
  for (const got of r.received) verifyAsCustomers(t, signing_secret, got);
});

test.serial('per endpoint, deliveries keep their order of creation', async (t) => {
  const r = await w.receiver();
  await w.createEndpoint(r.url, ['suppression.added']);
  const emails = Array.from({ length: 8 }, (_, i) => `order${i}@example.com`);
  for (const email of emails) await w.p.request('POST', '/suppressions', { key: w.team.key, body: { email } });
  await w.run();
  t.deepEqual(
    r.received.map((x) => JSON.parse(x.body).data.email),
    emails,
  );
});

test.serial(
  'a receiver that goes away and comes back on its port ends with every event, exactly as recorded',
  async (t) => {
    const outage = await w.p.createTeam('Outage');
    const kept = { ...w.deps, agents: createAgents() };
    const first = await w.receiver();
    const port = Number(new URL(first.url).port);
    const { id, signing_secret } = await w.createEndpoint(first.url, ['suppression.added'], outage.key);
    const suppress = async (n: number) => {
      const res = await w.p.request('POST', '/suppressions', {
        key: outage.key,
        body: { email: `outage${n}@example.com` },
      });
      t.is(res.status, 201);
    };
    let now = new Date();
    for (const n of [0, 1, 2]) await suppress(n);
    await fanOutSettled(w.p.db, now);
    await deliverDue(kept, now);
    t.is(first.received.length, 3);

    // Gone: its kept-alive connection closes with it, and every attempt now finds nothing listening.
    await first.close();
    for (const n of [3, 4, 5, 6]) await suppress(n);
    await fanOutSettled(w.p.db, now);
    await deliverDue(kept, now);
    const failing = await w.p.db('webhook_deliveries').where({ endpoint_id: id, status: 'attempting' }).orderBy('id');
    t.is(failing.length, 4);
    for (const d of failing) {
      // The first attempt and the immediate retry, both refused; the next one 5 s on.
      t.is(d.attempt_count, 2);
      const attempts = await w.p.db('webhook_attempts').where({ delivery_id: d.id });
      t.true(
        attempts.every((a) => a.http_status_code === null && /ECONNREFUSED|socket hang up|ECONNRESET/.test(a.error)),
        JSON.stringify(attempts.map((a) => a.error)),
      );
    }

    // Back on the same port; the retries come due.
    const second = await w.receiver([200], port);
    now = new Date(Math.max(...failing.map((d) => d.next_attempt_at.getTime())));
    await deliverDue(kept, now);
    t.is(second.received.length, 4);

    // Every event the team recorded arrived once as a success, its body exactly the event as stored, in order.
    const events = await w.p.db('events').where({ team_id: outage.id, type: 'suppression.added' }).orderBy('id');
    const received = [...first.received, ...second.received];
    t.is(events.length, 7);
    t.deepEqual(
      received.map((r) => r.body),
      events.map((e) => payloadOf(e)),
    );
    t.deepEqual(
      received.map((r) => JSON.parse(r.body).data.email),
      [0, 1, 2, 3, 4, 5, 6].map((n) => `outage${n}@example.com`),
    );
    for (const got of received) verifyAsCustomers(t, signing_secret, got);
    const deliveries = await w.p.db('webhook_deliveries').where({ endpoint_id: id }).orderBy('id');
    t.deepEqual(
      deliveries.map((d) => d.status),
      Array(7).fill('success'),
    );
    t.deepEqual(
      deliveries.map((d) => d.event_id),
      events.map((e) => e.id),
    );
    t.deepEqual(
      received.map((r) => r.headers['webhook-id']),
      deliveries.map((d) => d.id),
    );
    t.deepEqual(
      deliveries.map((d) => d.attempt_count),
      [1, 1, 1, 3, 3, 3, 3],
    );
  },
);

test.serial('a slow endpoint delays no other: the pool does not wait for it', async (t) => {
  const slow = await w.receiver();
  slow.delayMs = 2000;
  const fast = await w.receiver();
  await w.createEndpoint(slow.url, ['suppression.added']);
  await w.createEndpoint(fast.url, ['suppression.added']);
  await w.p.request('POST', '/suppressions', { key: w.team.key, body: { email: 'both@example.com' } });
  const now = new Date();
  await fanOutSettled(w.p.db, now);
  const pool = deliveryPool(w.deps, 10, (err) => t.fail(String(err)));
  // Every endpoint of the team subscribed to the type (earlier tests' too), each in its own slot.
  t.true((await pool.tick()) >= 2);
  // The slow endpoint answers after seconds: the fast one's success must come well before.
  await until(
    async () =>
      fast.received.length > 0 &&
      (await w.p
        .db('webhook_deliveries')
        .whereIn('endpoint_id', w.p.db('webhook_endpoints').select('id').where({ endpoint: fast.url }))
        .where({ status: 'success' })
        .first()),
    { what: 'the fast endpoint succeeded while the slow one was still answering', timeoutMs: 1500 },
  );
  // A second tick leases neither again while the slow one runs.
  t.is(await pool.tick(), 0);
  await pool.drain();
  t.is(slow.received.length, 1);
});
