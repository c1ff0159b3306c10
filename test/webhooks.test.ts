// Webhooks end to end: endpoints over the api, events from real actions fanned out and POSTed to a real loopback
// receiver, each delivery verified with the `standardwebhooks` and `svix` libraries exactly as a customer would.
// The jobs are driven by calling them with a clock (`now`), never by waiting on timers; serial, since fan-out
// and delivery are platform-wide.
import test from 'ava';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { startPlatform, type Platform, type TestTeam } from './helpers/platform.ts';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.ts';
import { fanOutSettled, payloadOf } from '../shared/webhooks/fanout.ts';
import {
  deliverDue,
  deliveryPool,
  MAX_ATTEMPTS,
  RETRY_DELAYS_MS,
  type DeliverDeps,
} from '../shared/webhooks/deliver.ts';
import { deliverParked } from '../shared/webhooks/deliveries.ts';
import { endpointProblem, findEndpoint } from '../shared/webhooks/endpoints.ts';
import { createAgents, postSigned } from '../shared/webhooks/target.ts';
import { secretsKey } from '../shared/secrets.ts';
import { until } from './helpers/wait.ts';

let p: Platform;
let team: TestTeam;
let deps: DeliverDeps;
const receivers: Receiver[] = [];

test.before(async () => {
  p = await startPlatform({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
  team = await p.createTeam('Webhooks');
  deps = { db: p.db, secrets: secretsKey(p.config), resolver: p.deps.dns, allowPrivate: true };
});

test.after.always(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await p?.close();
});

async function receiver(script?: number[]): Promise<Receiver> {
  const r = await startReceiver(script);
  receivers.push(r);
  return r;
}

async function createEndpoint(url: string, events: string[], key = team.key) {
  const res = await p.request('POST', '/webhooks', { key, body: { endpoint: url, events } });
  if (res.status !== 201) throw new Error(`POST /webhooks: ${res.status} ${res.text}`);
  return res.body as { id: string; signing_secret: string };
}

/** Fan out what has committed, then send what is due at `now`. */
async function run(now = new Date()) {
  await fanOutSettled(p.db, now);
  return deliverDue(deps, now);
}

function verifyBoth(
  t: import('ava').ExecutionContext,
  secret: string,
  r: { headers: Record<string, unknown>; body: string },
) {
  const h = r.headers as Record<string, string>;
  const standard = new StandardWebhook(secret).verify(r.body, {
    'webhook-id': h['webhook-id'],
    'webhook-timestamp': h['webhook-timestamp'],
    'webhook-signature': h['webhook-signature'],
  });
  const svix = new SvixWebhook(secret).verify(r.body, {
    'svix-id': h['svix-id'],
    'svix-timestamp': h['svix-timestamp'],
    'svix-signature': h['svix-signature'],
  });
  t.deepEqual(standard, JSON.parse(r.body));
  t.deepEqual(svix, JSON.parse(r.body));
  t.is(h['webhook-id'], h['svix-id']);
}

test.serial('endpoint CRUD: the secret once, masked after; update, rotate, delete', async (t) => {
  const created = await createEndpoint('https://hooks.example.com/in', ['email.sent', 'domain.created']);
  t.regex(created.signing_secret, /^whsec_[A-Za-z0-9+/]{32}$/);
  t.true(Buffer.from(created.signing_secret.slice(6), 'base64').length >= 24);

  const got = await p.request('GET', `/webhooks/${created.id}`, { key: team.key });
  t.is(got.status, 200);
  t.like(got.body, {
    object: 'webhook',
    id: created.id,
    endpoint: 'https://hooks.example.com/in',
    events: ['email.sent', 'domain.created'],
    status: 'enabled',
  });
  t.is(got.body.signing_secret.length, created.signing_secret.length);
  t.true(got.body.signing_secret.endsWith(created.signing_secret.slice(-4)));
  t.false(got.body.signing_secret.includes(created.signing_secret.slice(6, 20)));
  t.regex(got.body.created_at, /Z$/);

  const list = await p.request('GET', '/webhooks', { key: team.key });
  t.is(list.body.object, 'list');
  t.true(
    list.body.data.some(
      (w: { id: string; signing_secret?: string }) => w.id === created.id && w.signing_secret === undefined,
    ),
  );

  const patched = await p.request('PATCH', `/webhooks/${created.id}`, {
    key: team.key,
    body: { events: ['email.delivered'], status: 'disabled' },
  });
  t.deepEqual(patched.body, { object: 'webhook', id: created.id });
  t.like((await p.request('GET', `/webhooks/${created.id}`, { key: team.key })).body, {
    events: ['email.delivered'],
    status: 'disabled',
  });

  const rotated = await p.request('POST', `/webhooks/${created.id}/signing-secret/rotate`, { key: team.key });
  t.is(rotated.status, 200);
  t.is(rotated.body.object, 'webhook');
  t.not(rotated.body.signing_secret, created.signing_secret);
  t.true(
    (await p.request('GET', `/webhooks/${created.id}`, { key: team.key })).body.signing_secret.endsWith(
      rotated.body.signing_secret.slice(-4),
    ),
  );

  const bad = await p.request('POST', '/webhooks', {
    key: team.key,
    body: { endpoint: 'ftp://x.example/', events: ['email.sent'] },
  });
  t.is(bad.status, 422);
  t.is(bad.body.name, 'validation_error');
  t.is(
    (
      await p.request('POST', '/webhooks', {
        key: team.key,
        body: { endpoint: 'https://x.example/', events: ['email.nope'] },
      })
    ).status,
    422,
  );

  t.deepEqual((await p.request('DELETE', `/webhooks/${created.id}`, { key: team.key })).body, {
    object: 'webhook',
    id: created.id,
    deleted: true,
  });
  t.is((await p.request('GET', `/webhooks/${created.id}`, { key: team.key })).status, 404);
});

test.serial('https only unless the operator allows http', (t) => {
  t.is(
    endpointProblem('http://example.com/hook', false),
    'must be an https URL (http:// is allowed only when the operator sets WEBHOOK_ALLOW_HTTP=true)',
  );
  t.is(endpointProblem('http://example.com/hook', true), null);
  t.is(endpointProblem('https://example.com/hook', false), null);
  t.is(endpointProblem('https://user:pw@example.com/hook', false), 'must not contain credentials');
  t.is(endpointProblem('not a url', false), 'must be an absolute URL');
});

test.serial(
  'events of real actions are fanned out, delivered signed, verified by standardwebhooks and svix',
  async (t) => {
    const r = await receiver();
    const { id, signing_secret } = await createEndpoint(r.url, ['suppression.added', 'domain.created']);
    const other = await receiver();
    await createEndpoint(other.url, ['email.sent']);

    t.is(
      (await p.request('POST', '/suppressions', { key: team.key, body: { email: 'gone@example.com' } })).status,
      201,
    );
    const domain = await p.request('POST', '/domains', { key: team.key, body: { name: 'hooked-example.test' } });
    t.is(domain.status, 201);
    await run();

    t.is(r.received.length, 2);
    t.is(other.received.length, 0, 'an endpoint not subscribed to the type gets nothing');
    for (const got of r.received) verifyBoth(t, signing_secret, got);
    const [first, second] = r.received.map((x) => JSON.parse(x.body));
    t.is(first.type, 'suppression.added');
    t.is(first.data.email, 'gone@example.com');
    t.regex(first.created_at, /Z$/);
    t.is(second.type, 'domain.created');
    t.is(second.data.id, domain.body.id);

    const events = await p.request('GET', `/webhooks/${id}/events`, { key: team.key });
    t.is(events.status, 200);
    t.is(events.body.data.length, 2);
    t.deepEqual(
      events.body.data.map((e: { type: string }) => e.type),
      ['domain.created', 'suppression.added'],
    );
    t.true(events.body.data.every((e: { status: string }) => e.status === 'success'));
    const eventId = r.received[0].headers['webhook-id'] as string;
    const event = await p.request('GET', `/webhooks/${id}/events/${eventId}`, { key: team.key });
    t.like(event.body, {
      object: 'webhook_event',
      id: eventId,
      type: 'suppression.added',
      status: 'success',
      attempt_count: 1,
      next_attempt_at: null,
      last_http_status: 200,
    });
    t.deepEqual(event.body.payload, JSON.parse(r.received[0].body));
    const attempts = await p.request('GET', `/webhooks/${id}/events/${eventId}/attempts`, { key: team.key });
    t.is(attempts.body.data.length, 1);
    t.like(attempts.body.data[0], { attempt_number: 1, http_status_code: 200, response: 'answered 200', error: null });
    t.true(Number.isInteger(attempts.body.data[0].duration_ms));

    // Nothing is sent twice: a second run finds nothing new.
    await run();
    t.is(r.received.length, 2);

    // A replay sends the same bytes again, signed anew, under the same webhook-id.
    const replay = await p.request('POST', `/webhooks/${id}/events/${eventId}/replay`, { key: team.key });
    t.deepEqual(replay.body, { object: 'webhook_event', id: eventId });
    await run();
    t.is(r.received.length, 3);
    t.is(r.received[2].body, r.received[0].body);
    t.is(r.received[2].headers['webhook-id'], eventId);
    verifyBoth(t, signing_secret, r.received[2]);
  },
);

test.serial('a 500 then a 200: success after 2 attempts, the retry scheduled immediately', async (t) => {
  const r = await receiver([500, 200]);
  const { id, signing_secret } = await createEndpoint(r.url, ['suppression.added']);
  await p.request('POST', '/suppressions', { key: team.key, body: { email: 'retry@example.com' } });
  await run();
  t.is(r.received.length, 2);
  t.is(r.received[0].headers['webhook-id'], r.received[1].headers['webhook-id']);
  t.is(r.received[0].body, r.received[1].body);
  for (const got of r.received) verifyBoth(t, signing_secret, got);
  const eventId = r.received[0].headers['webhook-id'] as string;
  const event = (await p.request('GET', `/webhooks/${id}/events/${eventId}`, { key: team.key })).body;
  t.like(event, { status: 'success', attempt_count: 2, last_http_status: 200 });
  const attempts = (await p.request('GET', `/webhooks/${id}/events/${eventId}/attempts`, { key: team.key })).body.data;
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
  const r = await receiver([503]);
  const { id } = await createEndpoint(r.url, ['suppression.added']);
  await p.request('POST', '/suppressions', { key: team.key, body: { email: 'down@example.com' } });
  let now = new Date();
  await run(now);
  // The first attempt and the immediate retry; then one attempt per step of the schedule.
  t.is(r.received.length, 2);
  for (const delay of RETRY_DELAYS_MS.slice(1)) {
    const delivery = await p.db('webhook_deliveries').where({ endpoint_id: id }).first();
    t.is(delivery.status, 'attempting');
    t.true(delivery.next_attempt_at.getTime() - now.getTime() >= delay, `next attempt ${delay} ms later`);
    // Not before its time.
    await run(new Date(delivery.next_attempt_at.getTime() - 1));
    const before = r.received.length;
    now = delivery.next_attempt_at;
    await run(now);
    t.is(r.received.length, before + 1);
  }
  t.is(r.received.length, MAX_ATTEMPTS);
  const delivery = await p.db('webhook_deliveries').where({ endpoint_id: id }).first();
  t.like(delivery, {
    status: 'failed',
    parked: true,
    attempt_count: MAX_ATTEMPTS,
    last_http_status: 503,
    next_attempt_at: null,
  });
  const parked = await p.request('GET', `/webhooks/${id}/parked`, { key: team.key });
  t.deepEqual(
    parked.body.data.map((e: { id: string }) => e.id),
    [delivery.id],
  );

  r.script.splice(0, r.script.length, 200);
  const handed = await p.request('POST', `/webhooks/${id}/parked/deliver`, { key: team.key });
  t.deepEqual(handed.body, { object: 'parked_delivery', delivered: 1, remaining: 0, stopped_reason: null });
  await run(new Date(now.getTime() + 1000));
  t.like(await p.db('webhook_deliveries').where({ id: delivery.id }).first(), { status: 'success', parked: false });
});

test.serial('a disabled endpoint parks its events; enabled again, they go in bounded calls', async (t) => {
  const r = await receiver();
  const { id, signing_secret } = await createEndpoint(r.url, ['suppression.added']);
  await p.request('PATCH', `/webhooks/${id}`, { key: team.key, body: { status: 'disabled' } });
  for (const n of [1, 2, 3])
    await p.request('POST', '/suppressions', { key: team.key, body: { email: `parked${n}@example.com` } });
  await run();
  t.is(r.received.length, 0);
  const parked = await p.request('GET', `/webhooks/${id}/parked`, { key: team.key });
  t.is(parked.body.data.length, 3);
  t.like(parked.body.data[0], { status: 'pending', attempt_count: 0, last_http_status: null });

  const refused = await p.request('POST', `/webhooks/${id}/parked/deliver`, { key: team.key });
  t.is(refused.status, 422);
  await p.request('PATCH', `/webhooks/${id}`, { key: team.key, body: { status: 'enabled' } });
  const endpoint = (await findEndpoint(p.db, team.id, id))!;
  t.deepEqual(await deliverParked(p.db, endpoint, new Date(), 2), {
    delivered: 2,
    remaining: 1,
    stopped_reason: 'rate_limit_exceeded',
  });
  const rest = await p.request('POST', `/webhooks/${id}/parked/deliver`, { key: team.key });
  t.deepEqual(rest.body, { object: 'parked_delivery', delivered: 1, remaining: 0, stopped_reason: null });
  await run();
  t.deepEqual(
    r.received.map((x) => JSON.parse(x.body).data.email),
    ['parked1@example.com', 'parked2@example.com', 'parked3@example.com'],
  );
  for (const got of r.received) verifyBoth(t, signing_secret, got);
});

test.serial('per endpoint, deliveries keep their order of creation', async (t) => {
  const r = await receiver();
  await createEndpoint(r.url, ['suppression.added']);
  const emails = Array.from({ length: 8 }, (_, i) => `order${i}@example.com`);
  for (const email of emails) await p.request('POST', '/suppressions', { key: team.key, body: { email } });
  await run();
  t.deepEqual(
    r.received.map((x) => JSON.parse(x.body).data.email),
    emails,
  );
});

test.serial('a private target is refused at send time unless allowed; redirects are not followed', async (t) => {
  const r = await receiver();
  const refused = await postSigned(r.url, {}, '{}', { resolver: p.deps.dns, allowPrivate: false });
  t.false(refused.ok);
  t.regex((refused as { error: string }).error, /refused/);
  t.is(r.received.length, 0);
  for (const ip of [
    'http://169.254.169.254/latest',
    'http://10.0.0.1/',
    'http://[::1]:9/',
    'http://[::ffff:127.0.0.1]:9/',
  ]) {
    const res = await postSigned(ip, {}, '{}', { resolver: p.deps.dns, allowPrivate: false });
    t.regex((res as { error: string }).error, /refused/, ip);
  }

  // Through the whole path: the attempt is recorded with the refusal, nothing reaches the receiver.
  const { id } = await createEndpoint(r.url, ['suppression.added']);
  await p.request('POST', '/suppressions', { key: team.key, body: { email: 'private@example.com' } });
  const now = new Date();
  await fanOutSettled(p.db, now);
  await deliverDue({ ...deps, allowPrivate: false }, now);
  t.is(r.received.length, 0);
  const delivery = await p.db('webhook_deliveries').where({ endpoint_id: id }).first();
  const [attempt] = await p.db('webhook_attempts').where({ delivery_id: delivery.id });
  t.like(attempt, { attempt_number: 1, http_status_code: null });
  t.regex(attempt.error, /refused/);

  const redirect = await receiver([302]);
  const res = await postSigned(redirect.url, {}, '{}', { resolver: p.deps.dns, allowPrivate: true });
  t.like(res, { ok: false, status: 302, error: 'redirect not followed' });
});

test.serial('an endpoint only gets events of its own team', async (t) => {
  const r = await receiver();
  await createEndpoint(r.url, ['suppression.added']);
  const stranger = await p.createTeam('Stranger');
  await p.request('POST', '/suppressions', { key: stranger.key, body: { email: 'stranger@example.com' } });
  await run();
  t.is(r.received.length, 0);
});

test.serial(
  'a receiver that goes away and comes back on its port ends with every event, exactly as recorded',
  async (t) => {
    const outage = await p.createTeam('Outage');
    const kept = { ...deps, agents: createAgents() };
    const first = await receiver();
    const port = Number(new URL(first.url).port);
    const { id, signing_secret } = await createEndpoint(first.url, ['suppression.added'], outage.key);
    const suppress = async (n: number) => {
      const res = await p.request('POST', '/suppressions', {
        key: outage.key,
        body: { email: `outage${n}@example.com` },
      });
      t.is(res.status, 201);
    };
    let now = new Date();
    for (const n of [0, 1, 2]) await suppress(n);
    await fanOutSettled(p.db, now);
    await deliverDue(kept, now);
    t.is(first.received.length, 3);

    // Gone: its kept-alive connection closes with it, and every attempt now finds nothing listening.
    await first.close();
    for (const n of [3, 4, 5, 6]) await suppress(n);
    await fanOutSettled(p.db, now);
    await deliverDue(kept, now);
    const failing = await p.db('webhook_deliveries').where({ endpoint_id: id, status: 'attempting' }).orderBy('id');
    t.is(failing.length, 4);
    for (const d of failing) {
      // The first attempt and the immediate retry, both refused; the next one 5 s on.
      t.is(d.attempt_count, 2);
      const attempts = await p.db('webhook_attempts').where({ delivery_id: d.id });
      t.true(
        attempts.every((a) => a.http_status_code === null && /ECONNREFUSED|socket hang up|ECONNRESET/.test(a.error)),
        JSON.stringify(attempts.map((a) => a.error)),
      );
    }

    // Back on the same port; the retries come due.
    const second = await startReceiver([200], '/hook', port);
    receivers.push(second);
    now = new Date(Math.max(...failing.map((d) => d.next_attempt_at.getTime())));
    await deliverDue(kept, now);
    t.is(second.received.length, 4);

    // Every event the team recorded arrived once as a success, its body exactly the event as stored, in order.
    const events = await p.db('events').where({ team_id: outage.id, type: 'suppression.added' }).orderBy('id');
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
    for (const got of received) verifyBoth(t, signing_secret, got);
    const deliveries = await p.db('webhook_deliveries').where({ endpoint_id: id }).orderBy('id');
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
  const slow = await receiver();
  slow.delayMs = 2000;
  const fast = await receiver();
  await createEndpoint(slow.url, ['suppression.added']);
  await createEndpoint(fast.url, ['suppression.added']);
  await p.request('POST', '/suppressions', { key: team.key, body: { email: 'both@example.com' } });
  const now = new Date();
  await fanOutSettled(p.db, now);
  const pool = deliveryPool(deps, 10, (err) => t.fail(String(err)));
  // Every endpoint of the team subscribed to the type (earlier tests' too), each in its own slot.
  t.true((await pool.tick()) >= 2);
  // The slow endpoint answers after seconds: the fast one's success must come well before.
  await until(
    async () =>
      fast.received.length > 0 &&
      (await p
        .db('webhook_deliveries')
        .whereIn('endpoint_id', p.db('webhook_endpoints').select('id').where({ endpoint: fast.url }))
        .where({ status: 'success' })
        .first()),
    { what: 'the fast endpoint succeeded while the slow one was still answering', timeoutMs: 1500 },
  );
  // A second tick leases neither again while the slow one runs.
  t.is(await pool.tick(), 0);
  await pool.drain();
  t.is(slow.received.length, 1);
});
