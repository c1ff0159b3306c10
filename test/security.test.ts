// The security suite, driven by the declarations in api/routes/index.ts: every operation gets these checks
// without a line of its own. A new area with path ids must add a fixture in test/helpers/fixtures.ts.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { z } from 'zod';
import { operations } from '../api/routes/index.ts';
import { defineOperation, keyPermissions, type Operation } from '../api/routes/operation.ts';
import { createApp } from '../api/app.ts';
import { createKey } from '../shared/api-keys/keys.ts';
import { startPlatform, type Platform, type TestTeam, type TestResponse } from './helpers/platform.ts';
import { fillPath, fixtureFor, pathParamNames, sampleBodies } from './helpers/fixtures.ts';
import { grantedToken } from './helpers/oauth.ts';
import { scopeList } from '../shared/oauth/scopes.ts';

const V1 = '/api/v1';
const keyOps = operations.filter((op) => keyPermissions.includes(op.permission));
const name = (op: Operation, base = '') => `${verb(op)} ${base}${op.path}`;
/** fetch sends a lowercase `patch` as it is, which Node's parser refuses: methods go upper case. */
const verb = (op: Operation) => op.method.toUpperCase();
/** Any value fits the path: every refusal below happens before the parameters are read. */
const anyPath = (op: Operation) => fillPath(op.path, randomUUID());
const authRefusals = [
  'missing_api_key',
  'invalid_api_key',
  'restricted_api_key',
  'suspended_api_key',
  'invalid_permission',
];

let p: Platform;
let owner: TestTeam;
/** The requests of each test count against a team of its own, so parallel tests never share a rate limit. */
let other: TestTeam;
let pending: TestTeam;
let reaching: TestTeam;
let sendingKey: string;
let storeKey: string;

test.before(async () => {
  p = await startPlatform();
  let narrow: TestTeam;
  [owner, other, pending, reaching, narrow] = await Promise.all(
    ['Owner', 'Other', 'Pending', 'Reaching', 'Narrow'].map((n) => p.createTeam(n)),
  );
  const sending = await p.request('POST', '/api-keys', {
    key: narrow.key,
    body: { name: 'send only', permission: 'sending_access' },
  });
  if (sending.status !== 201) throw new Error(`could not create a sending_access key: ${sending.text}`);
  sendingKey = sending.body.token;
  storeKey = (await createKey(p.db, narrow.id, { name: 'store only', permission: 'store_access' })).token;
});

test.after.always(async () => {
  await p?.close();
});

/** Runs `check` for every operation, a few at a time (each team's rate limit is far above this). */
async function eachOp(ops: Operation[], check: (op: Operation) => Promise<void>, width = 8): Promise<void> {
  for (let i = 0; i < ops.length; i += width) await Promise.all(ops.slice(i, i + width).map(check));
}

function isRefusal(t: ExecutionContext, res: TestResponse, status: number, error: string, what: string) {
  t.is(res.status, status, `${what}: status (${res.text})`);
  t.is(res.body?.name, error, `${what}: name`);
  t.is(res.body?.statusCode, status, `${what}: statusCode in the body`);
}

test('the declarations hold key operations of every kind this suite checks', (t) => {
  // Guards the suite itself: if the filters below matched nothing, every loop would pass vacuously.
  t.true(keyOps.length > 50);
  t.true(keyOps.some((op) => !op.notImplemented && pathParamNames(op.path).length > 0));
  t.true(keyOps.some((op) => op.permission === 'sending_access'));
});

test('no Authorization header: 401 missing_api_key on every key operation', async (t) => {
  await eachOp(keyOps, async (op) => {
    const res = await p.request(verb(op), anyPath(op));
    isRefusal(t, res, 401, 'missing_api_key', name(op));
  });
  const sample = keyOps[0];
  isRefusal(t, await p.request(verb(sample), V1 + anyPath(sample)), 401, 'missing_api_key', name(sample, V1));
});

test('an unknown rk_ key or a malformed header: 403 invalid_api_key on every key operation', async (t) => {
  const unknown = `rk_${'A'.repeat(43)}`;
  const variants: [string, Record<string, string>][] = [
    ['unknown key', { authorization: `Bearer ${unknown}` }],
    ['`Bearer` alone', { authorization: 'Bearer' }],
    ['`Basic x`', { authorization: 'Basic x' }],
  ];
  await eachOp(keyOps, async (op) => {
    for (const [label, headers] of variants) {
      isRefusal(
        t,
        await p.request(verb(op), anyPath(op), { headers }),
        403,
        'invalid_api_key',
        `${name(op)} with ${label}`,
      );
    }
  });
  const sample = keyOps[0];
  for (const [label, headers] of variants) {
    isRefusal(
      t,
      await p.request(verb(sample), V1 + anyPath(sample), { headers }),
      403,
      'invalid_api_key',
      `${name(sample, V1)} with ${label}`,
    );
  }
});

test('a narrower key outside its routes: 401 restricted_api_key', async (t) => {
  await eachOp(keyOps, async (op) => {
    const path = anyPath(op);
    const bySending = await p.request(verb(op), path, { key: sendingKey });
    if (op.permission === 'sending_access') {
      t.false(
        authRefusals.includes(bySending.body?.name),
        `${name(op)}: a sending_access key reaches it (${bySending.text})`,
      );
    } else {
      isRefusal(t, bySending, 401, 'restricted_api_key', `${name(op)} with a sending_access key`);
    }
    const byStore = await p.request(verb(op), path, { key: storeKey });
    if (op.permission === 'store_access') {
      t.false(
        authRefusals.includes(byStore.body?.name),
        `${name(op)}: a store_access key reaches it (${byStore.text})`,
      );
    } else {
      isRefusal(t, byStore, 401, 'restricted_api_key', `${name(op)} with a store_access key`);
    }
  });
  const sample = keyOps.find((op) => op.permission !== 'sending_access')!;
  isRefusal(
    t,
    await p.request(verb(sample), V1 + anyPath(sample), { key: sendingKey }),
    401,
    'restricted_api_key',
    `${name(sample, V1)} with a sending_access key`,
  );
});

test('operations declared notImplemented answer 501 not_implemented after the key checks', async (t) => {
  const unbuilt = keyOps.filter((op) => op.notImplemented);
  if (unbuilt.length === 0) return t.pass('every area is built');
  await eachOp(unbuilt, async (op) => {
    const path = anyPath(op);
    isRefusal(
      t,
      await p.request(verb(op), path, { key: pending.key }),
      501,
      'not_implemented',
      `${name(op)} with a full_access key`,
    );
    if (op.permission === 'sending_access') {
      isRefusal(
        t,
        await p.request(verb(op), path, { key: sendingKey }),
        501,
        'not_implemented',
        `${name(op)} with a sending_access key`,
      );
    }
  });
  const sample = unbuilt[0];
  isRefusal(
    t,
    await p.request(verb(sample), V1 + anyPath(sample), { key: pending.key }),
    501,
    'not_implemented',
    name(sample, V1),
  );
});

test('an OAuth access token reaches an operation only with its x-service-scope: else 403 invalid_permission', async (t) => {
  // Tokens of a person's own team (admin), bound to this API: one holding every scope, one holding domains:read.
  const resource = `${p.config.PUBLIC_BASE_URL}/`;
  const all = scopeList(operations.map((op) => op.scope)).join(' ');
  const [every, one] = await Promise.all([
    grantedToken(p.db, p.url, 'security-all@people.test', all, resource),
    grantedToken(p.db, p.url, 'security-one@people.test', 'domains:read', resource),
  ]);
  t.is(every.tokens.status, 200, every.tokens.text);
  await eachOp(keyOps, async (op) => {
    const path = anyPath(op);
    const byEvery = await p.request(verb(op), path, { key: every.tokens.body.access_token });
    if (op.scope === null) isRefusal(t, byEvery, 403, 'invalid_permission', `${name(op)}: no scope reaches it`);
    else t.false(authRefusals.includes(byEvery.body?.name), `${name(op)} refused its scope (${byEvery.text})`);
    const byOne = await p.request(verb(op), path, { key: one.tokens.body.access_token });
    if (op.scope === 'domains:read')
      t.false(authRefusals.includes(byOne.body?.name), `${name(op)} refused domains:read (${byOne.text})`);
    else isRefusal(t, byOne, 403, 'invalid_permission', `${name(op)} with a domains:read token`);
  });
});

test('implemented operations are reached by a full_access key', async (t) => {
  const built = keyOps.filter((op) => !op.notImplemented);
  t.true(built.length > 0);
  for (const op of built) {
    const res = await p.request(verb(op), anyPath(op), { key: reaching.key });
    t.false(authRefusals.includes(res.body?.name), `${name(op)}: refused a full_access key (${res.text})`);
    t.not(res.status, 501, `${name(op)}: not implemented`);
    t.true(res.status < 500, `${name(op)}: ${res.status} ${res.text}`);
  }
});

test("a path id of another team (or of nothing) answers 404 not_found, and the owner's resource is untouched", async (t) => {
  const withIds = keyOps.filter((op) => !op.notImplemented && pathParamNames(op.path).length > 0);
  for (const op of withIds) {
    const fixture = fixtureFor(op);
    if (!fixture) {
      t.fail(`${name(op)}: no fixture for the area "${op.tag}" in test/helpers/fixtures.ts`);
      continue;
    }
    const body = op.body ? sampleBodies[op.operationId] : undefined;
    if (op.body && body === undefined) {
      t.fail(`${name(op)}: no sample body for ${op.operationId} in test/helpers/fixtures.ts`);
      continue;
    }
    const ids = await fixture(p, owner);
    const ownersPath = fillPath(op.path, ids);
    isRefusal(
      t,
      await p.request(verb(op), ownersPath, { key: other.key, body }),
      404,
      'not_found',
      `${name(op)} with another team's id`,
    );
    isRefusal(
      t,
      await p.request(verb(op), fillPath(op.path, randomUUID()), { key: other.key, body }),
      404,
      'not_found',
      `${name(op)} with an id of nothing`,
    );
    // A write by the other team changed nothing: the owner still reads the resource.
    const read = operations.find((o) => o.method === 'get' && o.path === op.path && !o.notImplemented);
    if (read)
      t.is(
        (await p.request('GET', ownersPath, { key: owner.key })).status,
        200,
        `${name(op)}: the owner still reads ${ownersPath}`,
      );
  }
  const sample = withIds[0];
  const ids = await fixtureFor(sample)!(p, owner);
  const res = await p.request(verb(sample), V1 + fillPath(sample.path, ids), {
    key: other.key,
    body: sampleBodies[sample.operationId],
  });
  isRefusal(t, res, 404, 'not_found', `${name(sample, V1)} with another team's id`);
});

test('unauthenticated operations answer without a key', async (t) => {
  const open = operations.filter((op) => op.permission === 'none');
  t.true(open.length > 0);
  for (const op of open) {
    const res = await p.request(verb(op), anyPath(op));
    // Its declared statuses (a /ready whose dependency is slow under load answers its declared 503); a public
    // file named by ids (a brand logo) answers 404 not_found for the ids of nothing used here.
    // An operation with a body (sign-up, sign-in) answers 422 for the missing one: reached, not refused.
    const expected = [
      op.status ?? 200,
      ...(op.alsoAnswers ?? []),
      ...(pathParamNames(op.path).length ? [404] : []),
      ...(op.body ? [422] : []),
    ];
    t.true(expected.includes(res.status), `${name(op)}: ${res.status} ${res.text}`);
  }
});

test('operations no API key reaches (session, null) are refused with and without a key or a token, never run unauthenticated', async (t) => {
  // Synthetic ones, routed by the real router: a `session` operation, and a `null` one not marked oauthOnly (the one
  // declared, /mcp, checks its own OAuth token: oauth.test.ts). Neither runs for a key or without a credential.
  const reached = z.object({ reached: z.literal(true) });
  const declare = (operationId: string, path: string, permission: 'session' | null) =>
    defineOperation({
      operationId,
      method: 'get',
      path,
      tag: 'probe',
      summary: 'probe',
      description: 'A test-only route.',
      permission,
      scope: null,
      response: reached,
      handler: async () => ({ reached: true as const }),
    });
  const server = createApp(p.deps, [
    declare('sessionProbe', '/session-probe', 'session'),
    declare('nullProbe', '/null-probe', null),
  ]).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const granted = await grantedToken(
    p.db,
    p.url,
    'security-probe@people.test',
    'domains:read',
    `${p.config.PUBLIC_BASE_URL}/`,
  );
  try {
    for (const path of ['/session-probe', '/null-probe']) {
      const bare = await fetch(base + path, { headers: { 'user-agent': 'postwerk-tests/1.0' } });
      const bareBody = await bare.json();
      t.is(bare.status, 401, `${path} without a key: ${JSON.stringify(bareBody)}`);
      t.is(bareBody.name, 'missing_api_key');
      const keyed = await fetch(base + path, {
        headers: { 'user-agent': 'postwerk-tests/1.0', authorization: `Bearer ${reaching.key}` },
      });
      const keyedBody = await keyed.json();
      t.is(keyed.status, 401, `${path} with a full_access key: ${JSON.stringify(keyedBody)}`);
      t.is(keyedBody.name, 'restricted_api_key');
      const tokened = await fetch(base + path, {
        headers: { 'user-agent': 'postwerk-tests/1.0', authorization: `Bearer ${granted.tokens.body.access_token}` },
      });
      const tokenedBody = await tokened.json();
      t.is(tokened.status, 401, `${path} with an OAuth token: ${JSON.stringify(tokenedBody)}`);
      t.is(tokenedBody.name, 'restricted_api_key');
    }
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
