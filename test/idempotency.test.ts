// The Idempotency-Key middleware (api/middleware/idempotency.ts, shared/idempotency/store.ts). Its cases run on a
// test operation mounted next to the real ones with the real chain, whose handler can be held, failed or refused
// at will. The send routes that declare it are checked in emails-send.test.ts (POST /emails) and
// idempotency-batch.test.ts (POST /emails/batch).
import test from 'ava';
import { z } from 'zod';
import { startPlatform, type Platform, type TestResponse } from './helpers/platform.ts';
import { serve, type Served } from './helpers/http.ts';
import { isRefusal, keyRow } from './helpers/idempotency.ts';
import { createApp } from '../api/app.ts';
import { operations } from '../api/routes/index.ts';
import { defineOperation } from '../api/routes/operation.ts';
import { newId } from '../shared/ids.ts';
import { ServiceError } from '../shared/errors.ts';

/** Runs of the handler per `name`; a name's gate holds its next run until opened. */
const runs = new Map<string, number>();
const gates = new Map<string, { entered: () => void; wait: Promise<void> }>();
const failures = new Map<string, number>();
/** Names whose next run refuses with a 422, as a send with a bad recipient would. */
const refusals = new Set<string>();

function hold(name: string): { entered: Promise<void>; open: () => void } {
  let entered!: () => void;
  let open!: () => void;
  const enteredP = new Promise<void>((r) => (entered = r));
  gates.set(name, { entered, wait: new Promise<void>((r) => (open = r)) });
  return { entered: enteredP, open };
}

const createThing = defineOperation({
  operationId: 'testCreateThing',
  method: 'post',
  path: '/things',
  tag: 'things',
  summary: 'test only',
  description: 'A test-only route.',
  permission: 'sending_access',
  scope: null,
  idempotent: true,
  status: 201,
  body: z.object({
    name: z.string(),
    tags: z.array(z.number()).optional(),
    meta: z.record(z.string(), z.unknown()).optional(),
  }),
  response: z.object({ object: z.literal('thing'), id: z.uuid(), name: z.string(), run: z.number() }),
  handler: async ({ body }) => {
    const run = (runs.get(body.name) ?? 0) + 1;
    runs.set(body.name, run);
    const gate = gates.get(body.name);
    if (gate) {
      gates.delete(body.name);
      gate.entered();
      await gate.wait;
    }
    if (refusals.delete(body.name)) throw new ServiceError('validation_error', `refused ${body.name}`);
    const failing = failures.get(body.name) ?? 0;
    if (failing > 0) {
      failures.set(body.name, failing - 1);
      throw new Error('boom: the send failed on our side');
    }
    return { object: 'thing' as const, id: newId(), name: body.name, run };
  },
});

let p: Platform;
let app: Served;
test.before(async () => {
  p = await startPlatform();
  app = await serve(createApp(p.deps, [...operations, createThing]));
});
test.after.always(async () => {
  await app?.close();
  await p?.close();
});

let names = 0;
const unique = (label: string) => `${label}-${++names}`;

async function sendingKey(): Promise<{ teamId: string; key: string }> {
  const team = await p.createTeam();
  const res = await p.request('POST', '/api-keys', {
    key: team.key,
    body: { name: 'send', permission: 'sending_access' },
  });
  return { teamId: team.id, key: res.body.token };
}

function post(key: string, body: unknown, idempotencyKey?: string, path = '/things'): Promise<TestResponse> {
  return app.request('POST', path, {
    key,
    body,
    headers: idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
  });
}

test('same key and same body: the first response is replayed and the handler runs once', async (t) => {
  const { teamId, key } = await sendingKey();
  const name = unique('replay');
  const idem = `order-${name}`;
  const first = await post(key, { name, tags: [1, 2], meta: { a: 1, b: { c: 2, d: 3 } } }, idem);
  t.is(first.status, 201);
  t.is(first.body.run, 1);
  t.is(first.headers.get('idempotent-replayed'), null);

  // The same JSON value with other key order and spacing, at / and under /api/v1.
  const again = await app.request('POST', '/things', {
    key,
    rawBody: ` { "meta": { "b": { "d": 3, "c": 2 }, "a": 1 },\n "tags": [1, 2], "name": "${name}" } `,
    headers: { 'content-type': 'application/json', 'idempotency-key': idem },
  });
  const v1 = await post(key, { name, tags: [1, 2], meta: { a: 1, b: { c: 2, d: 3 } } }, idem, '/api/v1/things');
  for (const res of [again, v1]) {
    t.is(res.status, 201);
    t.deepEqual(res.body, first.body);
    t.is(res.headers.get('idempotent-replayed'), 'true');
  }
  t.is(runs.get(name), 1);
  t.like(await keyRow(p, teamId, idem), { status: 'done', response_status: 201 });

  // Another key, or none, runs again.
  t.is((await post(key, { name, tags: [1, 2], meta: { a: 1, b: { c: 2, d: 3 } } }, `${idem}-2`)).body.run, 2);
  t.is((await post(key, { name, tags: [1, 2], meta: { a: 1, b: { c: 2, d: 3 } } })).body.run, 3);
  t.is((await post(key, { name, tags: [1, 2], meta: { a: 1, b: { c: 2, d: 3 } } })).body.run, 4);
});

test('same key with a different body is 409 invalid_idempotent_request and nothing runs', async (t) => {
  const { key } = await sendingKey();
  const name = unique('different');
  t.is((await post(key, { name, tags: [1] }, name)).status, 201);
  for (const body of [{ name, tags: [2] }, { name, tags: [1, 1] }, { name }, { name: `${name}x`, tags: [1] }]) {
    isRefusal(t, await post(key, body, name), 409, 'invalid_idempotent_request');
  }
  t.is(runs.get(name), 1);
  t.false(runs.has(`${name}x`));
});

test('a second request while the first is in flight is 409 concurrent_idempotent_requests', async (t) => {
  const { teamId, key } = await sendingKey();
  const name = unique('concurrent');
  const gate = hold(name);
  const first = post(key, { name }, name);
  await gate.entered;
  t.like(await keyRow(p, teamId, name), { status: 'in_flight' });
  isRefusal(t, await post(key, { name }, name), 409, 'concurrent_idempotent_requests');
  isRefusal(t, await post(key, { name }, name, '/api/v1/things'), 409, 'concurrent_idempotent_requests');
  // A different body under the in-flight key is still a different request.
  isRefusal(t, await post(key, { name, tags: [1] }, name), 409, 'invalid_idempotent_request');
  gate.open();
  const done = await first;
  t.is(done.status, 201);
  t.is(runs.get(name), 1);
  const replay = await post(key, { name }, name);
  t.deepEqual(replay.body, done.body);
  t.is(replay.headers.get('idempotent-replayed'), 'true');
});

test('Idempotency-Key length: 1 to 256 characters; 257 is 400 invalid_idempotency_key', async (t) => {
  const { teamId, key } = await sendingKey();
  const name = unique('length');
  const tooLong = 'k'.repeat(257);
  isRefusal(t, await post(key, { name }, tooLong), 400, 'invalid_idempotency_key');
  t.false(runs.has(name));
  t.is(await keyRow(p, teamId, tooLong), undefined);
  for (const idem of ['k'.repeat(256), 'k', "!#$%&'*+-.^_`|~ key with spaces"]) {
    const res = await post(key, { name }, idem);
    t.is(res.status, 201, idem);
    t.is((await post(key, { name }, idem)).headers.get('idempotent-replayed'), 'true');
  }
  t.is(runs.get(name), 3);
});

test('a present but empty or blank Idempotency-Key is 400 invalid_idempotency_key and runs nothing', async (t) => {
  const { teamId, key } = await sendingKey();
  const name = unique('empty');
  for (const idem of ['', '   ']) {
    const res = await post(key, { name }, idem);
    t.is(res.status, 400, JSON.stringify(idem));
    t.is(res.body.name, 'invalid_idempotency_key');
  }
  t.is(runs.get(name), undefined);
  t.is(await keyRow(p, teamId, ''), undefined);
});

test('keys are scoped to the team: another team with the same key runs again', async (t) => {
  const one = await sendingKey();
  const two = await sendingKey();
  const name = unique('scoped');
  const a = await post(one.key, { name }, 'shared-key');
  const b = await post(two.key, { name }, 'shared-key');
  t.is(a.status, 201);
  t.is(b.status, 201);
  t.is(b.headers.get('idempotent-replayed'), null);
  t.not(b.body.id, a.body.id);
  t.is(runs.get(name), 2);
  // Each team replays its own answer; a different body in the other team is no conflict.
  t.deepEqual((await post(one.key, { name }, 'shared-key')).body, a.body);
  t.deepEqual((await post(two.key, { name }, 'shared-key')).body, b.body);
  t.is((await post(two.key, { name: `${name}-other` }, 'shared-key')).status, 409);
  const third = await p.createTeam();
  t.is((await post(third.key, { name: `${name}-other` }, 'shared-key')).status, 201);
});

test('a handler failure (500) releases the key, so the retry runs', async (t) => {
  const { teamId, key } = await sendingKey();
  const name = unique('failure');
  failures.set(name, 1);
  const failed = await post(key, { name }, name);
  isRefusal(t, failed, 500, 'application_error');
  t.false(failed.text.includes('boom'));
  t.is(await keyRow(p, teamId, name), undefined);
  const retry = await post(key, { name }, name);
  t.is(retry.status, 201);
  t.is(retry.body.run, 2);
  t.is(retry.headers.get('idempotent-replayed'), null);
  t.deepEqual((await post(key, { name }, name)).body, retry.body);
});

test('an in-flight record older than 60 s is taken over by the same request; a newer one is not', async (t) => {
  const { teamId, key } = await sendingKey();
  const name = unique('abandoned');
  const gate = hold(name);
  const abandoned = post(key, { name }, name);
  await gate.entered;
  const age = (s: number) =>
    p
      .db('idempotency_keys')
      .where({ team_id: teamId, key: name })
      .update({ created_at: new Date(Date.now() - s * 1000) });

  await age(50);
  isRefusal(t, await post(key, { name }, name), 409, 'concurrent_idempotent_requests');
  await age(61);
  // Only the same request may take it over.
  isRefusal(t, await post(key, { name, tags: [1] }, name), 409, 'invalid_idempotent_request');
  const takeover = await post(key, { name }, name);
  t.is(takeover.status, 201);
  t.is(takeover.body.run, 2);
  t.is(takeover.headers.get('idempotent-replayed'), null);

  // The old run finishing late does not overwrite the stored answer.
  gate.open();
  t.is((await abandoned).status, 201);
  const replay = await post(key, { name }, name);
  t.deepEqual(replay.body, takeover.body);
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.is(runs.get(name), 2);
});

test('a record older than 24 h is replaced; a younger one still replays', async (t) => {
  const { teamId, key } = await sendingKey();
  const name = unique('expired');
  const first = await post(key, { name }, name);
  const age = (ms: number) =>
    p
      .db('idempotency_keys')
      .where({ team_id: teamId, key: name })
      .update({ created_at: new Date(Date.now() - ms) });

  await age(23 * 3600_000);
  t.deepEqual((await post(key, { name }, name)).body, first.body);
  t.is(runs.get(name), 1);

  await age(24 * 3600_000 + 60_000);
  const fresh = await post(key, { name }, name);
  t.is(fresh.status, 201);
  t.is(fresh.body.run, 2);
  t.is(fresh.headers.get('idempotent-replayed'), null);
  t.true(Date.now() - (await keyRow(p, teamId, name)).created_at.getTime() < 60_000);

  // An expired record does not even need the same body.
  await age(25 * 3600_000);
  const other = await post(key, { name, tags: [9] }, name);
  t.is(other.status, 201);
  t.is(other.body.run, 3);
  t.deepEqual((await post(key, { name, tags: [9] }, name)).body, other.body);
});

test('body validation and authentication failures come before the key is claimed', async (t) => {
  const { teamId, key } = await sendingKey();
  const name = unique('early');
  const invalid = await app.request('POST', '/things', {
    key,
    body: { nope: 1 },
    headers: { 'idempotency-key': name },
  });
  isRefusal(t, invalid, 422, 'missing_required_field');
  isRefusal(
    t,
    await app.request('POST', '/things', { body: { name }, headers: { 'idempotency-key': name } }),
    401,
    'missing_api_key',
  );
  t.is(await keyRow(p, teamId, name), undefined);
  t.is((await post(key, { name }, name)).status, 201);
});

test('a refusal (422) is remembered and replayed like a success; a 409 or 429 is not', async (t) => {
  const { teamId, key } = await sendingKey();
  const name = unique('refused');
  refusals.add(name);
  const first = await post(key, { name }, name);
  isRefusal(t, first, 422, 'validation_error');
  const again = await post(key, { name }, name);
  t.is(again.status, 422);
  t.deepEqual(again.body, first.body);
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.is(runs.get(name), 1);
  t.is((await keyRow(p, teamId, name)).status, 'done');
});

test('a run whose reservation was taken over cannot store its answer while the new run is in flight', async (t) => {
  const { key } = await sendingKey();
  const name = unique('overtaken');
  const oldGate = hold(name);
  const old = post(key, { name }, name);
  await oldGate.entered;
  await p
    .db('idempotency_keys')
    .where({ key: name })
    .update({ created_at: new Date(Date.now() - 61_000) });
  const newGate = hold(name);
  const fresh = post(key, { name }, name);
  await newGate.entered;
  oldGate.open();
  t.is((await old).status, 201);
  // The new run still holds the key: the old answer was not stored.
  isRefusal(t, await post(key, { name }, name), 409, 'concurrent_idempotent_requests');
  newGate.open();
  const answer = await fresh;
  t.is(answer.body.run, 2);
  const replay = await post(key, { name }, name);
  t.deepEqual(replay.body, answer.body);
  t.is(replay.headers.get('idempotent-replayed'), 'true');
});
