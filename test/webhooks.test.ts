// Webhooks end to end: endpoints over the api, events from real actions fanned out and POSTed to a real loopback
// receiver, each delivery verified with the `standardwebhooks` and `svix` libraries exactly as a customer would;
// only a team's own events, never to a private target unless allowed. The jobs are driven by calling them with a
// clock (`now`), never by waiting on timers; serial, since fan-out and delivery are platform-wide.
import test from 'ava';
import { Resend } from 'resend';
import { startWebhookWorld, verifyAsCustomers, type WebhookWorld } from './helpers/webhook-world.ts';
import { fanOutSettled } from '../shared/webhooks/fanout.ts';
import { deliverDue } from '../shared/webhooks/deliver.ts';
import { endpointProblem } from '../shared/webhooks/endpoints.ts';
import { postSigned } from '../shared/webhooks/target.ts';

let w: WebhookWorld;
test.before(async () => {
  w = await startWebhookWorld();
});
test.after.always(() => w?.close());

test.serial('endpoint CRUD: the secret once, masked after; update, rotate, delete', async (t) => {
  const created = await w.createEndpoint('https://hooks.example.com/in', ['email.sent', 'domain.created']);
  t.regex(created.signing_secret, /^whsec_[A-Za-z0-9+/]{32}$/);
  t.true(Buffer.from(created.signing_secret.slice(6), 'base64').length >= 24);

  const got = await w.p.request('GET', `/webhooks/${created.id}`, { key: w.team.key });
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

  const list = await w.p.request('GET', '/webhooks', { key: w.team.key });
  t.is(list.body.object, 'list');
  t.true(
    list.body.data.some(
      (w: { id: string; signing_secret?: string }) => w.id === created.id && w.signing_secret === undefined,
    ),
  );

  const patched = await w.p.request('PATCH', `/webhooks/${created.id}`, {
    key: w.team.key,
    body: { events: ['email.delivered'], status: 'disabled' },
  });
  t.deepEqual(patched.body, { object: 'webhook', id: created.id });
  t.like((await w.p.request('GET', `/webhooks/${created.id}`, { key: w.team.key })).body, {
    events: ['email.delivered'],
    status: 'disabled',
  });

  const rotated = await w.p.request('POST', `/webhooks/${created.id}/signing-secret/rotate`, { key: w.team.key });
  t.is(rotated.status, 200);
  t.is(rotated.body.object, 'webhook');
  t.not(rotated.body.signing_secret, created.signing_secret);
  t.true(
    (await w.p.request('GET', `/webhooks/${created.id}`, { key: w.team.key })).body.signing_secret.endsWith(
      rotated.body.signing_secret.slice(-4),
    ),
  );

  const bad = await w.p.request('POST', '/webhooks', {
    key: w.team.key,
    body: { endpoint: 'ftp://x.example/', events: ['email.sent'] },
  });
  t.is(bad.status, 422);
  t.is(bad.body.name, 'validation_error');
  t.is(
    (
      await w.p.request('POST', '/webhooks', {
        key: w.team.key,
        body: { endpoint: 'https://x.example/', events: ['email.nope'] },
      })
    ).status,
    422,
  );

  t.deepEqual((await w.p.request('DELETE', `/webhooks/${created.id}`, { key: w.team.key })).body, {
    object: 'webhook',
    id: created.id,
    deleted: true,
  });
  t.is((await w.p.request('GET', `/webhooks/${created.id}`, { key: w.team.key })).status, 404);
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
    const r = await w.receiver();
    const { id, signing_secret } = await w.createEndpoint(r.url, ['suppression.added', 'domain.created']);
    const other = await w.receiver();
    await w.createEndpoint(other.url, ['email.sent']);

    t.is(
      (await w.p.request('POST', '/suppressions', { key: w.team.key, body: { email: 'gone@example.com' } })).status,
      201,
    );
    const domain = await w.p.request('POST', '/domains', { key: w.team.key, body: { name: 'hooked-example.test' } });
    t.is(domain.status, 201);
    await w.run();

    t.is(r.received.length, 2);
    t.is(other.received.length, 0, 'an endpoint not subscribed to the type gets nothing');
    for (const got of r.received) verifyAsCustomers(t, signing_secret, got);
    const [first, second] = r.received.map((x) => JSON.parse(x.body));
    t.is(first.type, 'suppression.added');
    t.is(first.data.email, 'gone@example.com');
    t.regex(first.created_at, /Z$/);
    t.is(second.type, 'domain.created');
    t.is(second.data.id, domain.body.id);

    const events = await w.p.request('GET', `/webhooks/${id}/events`, { key: w.team.key });
    t.is(events.status, 200);
    t.is(events.body.data.length, 2);
    t.deepEqual(
      events.body.data.map((e: { type: string }) => e.type),
      ['domain.created', 'suppression.added'],
    );
    t.true(events.body.data.every((e: { status: string }) => e.status === 'success'));
    const eventId = r.received[0].headers['webhook-id'] as string;
    const event = await w.p.request('GET', `/webhooks/${id}/events/${eventId}`, { key: w.team.key });
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
    const attempts = await w.p.request('GET', `/webhooks/${id}/events/${eventId}/attempts`, { key: w.team.key });
    t.is(attempts.body.data.length, 1);
    t.like(attempts.body.data[0], { attempt_number: 1, http_status_code: 200, response: 'answered 200', error: null });
    t.true(Number.isInteger(attempts.body.data[0].duration_ms));

    // Nothing is sent twice: a second run finds nothing new.
    await w.run();
    t.is(r.received.length, 2);

    // A replay sends the same bytes again, signed anew, under the same webhook-id.
    const replay = await w.p.request('POST', `/webhooks/${id}/events/${eventId}/replay`, { key: w.team.key });
    t.deepEqual(replay.body, { object: 'webhook_event', id: eventId });
    await w.run();
    t.is(r.received.length, 3);
    t.is(r.received[2].body, r.received[0].body);
    t.is(r.received[2].headers['webhook-id'], eventId);
    verifyAsCustomers(t, signing_secret, r.received[2]);

    // The same through the official SDK's webhooks.events.
    const resend = new Resend(w.team.key, { baseUrl: w.p.url } as never);
    const listed = await resend.webhooks.events.list({ webhookId: id, limit: 1 });
    t.is(listed.error, null, JSON.stringify(listed.error));
    t.is(listed.data?.data.length, 1);
    t.true(listed.data?.has_more);
    const got = await resend.webhooks.events.get({ webhookId: id, eventId });
    t.like(got.data, { id: eventId, type: 'suppression.added', attempt_count: 2 });
    const tried = await resend.webhooks.events.attempts.list({ webhookId: id, eventId });
    // The SDK types id, http_status_code, response and sent_at; the spec's attempt_number comes beside them.
    t.true(tried.data?.data.every((a) => a.http_status_code === 200 && /Z$/.test(a.sent_at)));
    t.deepEqual(
      (tried.data?.data as unknown as { attempt_number: number }[]).map((a) => a.attempt_number),
      [2, 1],
    );
    t.deepEqual((await resend.webhooks.events.replay({ webhookId: id, eventId })).data, {
      object: 'webhook_event',
      id: eventId,
    });
    await w.run();
    t.is(r.received.length, 4);
  },
);

test.serial('a private target is refused at send time unless allowed; redirects are not followed', async (t) => {
  const r = await w.receiver();
  const refused = await postSigned(r.url, {}, '{}', { resolver: w.p.deps.dns, allowPrivate: false });
  t.false(refused.ok);
  t.regex((refused as { error: string }).error, /refused/);
  t.is(r.received.length, 0);
  for (const ip of [
    'http://169.254.169.254/latest',
    'http://10.0.0.1/',
    'http://[::1]:9/',
    'http://[::ffff:127.0.0.1]:9/',
  ]) {
    const res = await postSigned(ip, {}, '{}', { resolver: w.p.deps.dns, allowPrivate: false });
    t.regex((res as { error: string }).error, /refused/, ip);
  }

  // Through the whole path: the attempt is recorded with the refusal, nothing reaches the receiver.
  const { id } = await w.createEndpoint(r.url, ['suppression.added']);
  await w.p.request('POST', '/suppressions', { key: w.team.key, body: { email: 'private@example.com' } });
  const now = new Date();
  await fanOutSettled(w.p.db, now);
  await deliverDue({ ...w.deps, allowPrivate: false }, now);
  t.is(r.received.length, 0);
  const delivery = await w.p.db('webhook_deliveries').where({ endpoint_id: id }).first();
  const [attempt] = await w.p.db('webhook_attempts').where({ delivery_id: delivery.id });
  t.like(attempt, { attempt_number: 1, http_status_code: null });
  t.regex(attempt.error, /refused/);

  const redirect = await w.receiver([302]);
  const res = await postSigned(redirect.url, {}, '{}', { resolver: w.p.deps.dns, allowPrivate: true });
  t.like(res, { ok: false, status: 302, error: 'redirect not followed' });
});

test.serial('an endpoint only gets events of its own team', async (t) => {
  const r = await w.receiver();
  await w.createEndpoint(r.url, ['suppression.added']);
  const stranger = await w.p.createTeam('Stranger');
  await w.p.request('POST', '/suppressions', { key: stranger.key, body: { email: 'stranger@example.com' } });
  await w.run();
  t.is(r.received.length, 0);
});
