// HTTP conventions of CONTRACT.md "HTTP basics" and the Error shape, against the real app. What the api does
// with odd input (bodies, ids, headers) is in request-input.test.ts.
import test from 'ava';
import { z } from 'zod';
import { startPlatform, type Platform, type TestResponse } from './helpers/platform.ts';
import { fromNode, isError, leaks, nodeRequest, serve, type Served } from './helpers/http.ts';
import { operations } from '../api/routes/index.ts';
import { defineOperation } from '../api/routes/operation.ts';
import { notYetOperations } from '../api/routes/not-yet.ts';
import { createApp } from '../api/app.ts';
import { newId } from '../shared/ids.ts';

let p: Platform;
let key: string;
test.before(async () => {
  p = await startPlatform();
  key = (await p.createTeam()).key;
});
test.after.always(async () => {
  await p?.close();
});

function fill(path: string, id: string): string {
  return path.replace(/\{[^}]+\}/g, id);
}

test('every operation answers the same at / and under /api/v1', async (t) => {
  const id = newId();
  const stable = (r: TestResponse) => ({
    status: r.status,
    type: r.headers.get('content-type'),
    keys: r.body && typeof r.body === 'object' ? Object.keys(r.body).sort() : r.body,
    name: r.body?.name,
    object: r.body?.object,
  });
  t.true(operations.length > 50);
  for (const op of operations) {
    const path = fill(op.path, id);
    const options = { key, body: op.method === 'get' || op.method === 'delete' ? undefined : {} };
    const root = await p.request(op.method.toUpperCase(), path, options);
    const v1 = await p.request(op.method.toUpperCase(), `/api/v1${path}`, options);
    // Routed: a 404 may only say the resource is missing, never that the route is.
    t.not(root.body?.message, 'Route not found.', `${op.method} ${path} is not routed`);
    t.not(root.status, 405, `${op.method} ${path} is not routed`);
    // Readiness may change between the two calls on a loaded machine (a check past its 2 s budget): its shape may not.
    if (op.operationId === 'getReady') t.deepEqual(stable(v1).keys, stable(root).keys, `${op.method} ${op.path}`);
    else t.deepEqual(stable(v1), stable(root), `${op.method} ${op.path}`);
    t.deepEqual(leaks(root.text + v1.text), []);
    // Errors have the Error shape; a degraded /ready answers 503 with its own documented report instead.
    if (root.status >= 400 && op.operationId !== 'getReady') t.is(root.body.statusCode, root.status);
  }
  const health = await p.request('GET', '/health');
  t.deepEqual((await p.request('GET', '/api/v1/health')).body, health.body);
  t.deepEqual((await p.request('GET', '/api/v1/openapi.json')).body, (await p.request('GET', '/openapi.json')).body);
});

test('a request without a User-Agent is refused with 400 validation_error', async (t) => {
  for (const headers of [{}, { 'user-agent': '' }, { 'user-agent': '   ' }] as Record<string, string>[]) {
    const res = fromNode(await nodeRequest(p.url, { method: 'GET', path: '/health', headers }));
    isError(t, res, 400, 'validation_error');
    t.regex(res.body.message, /User-Agent/);
  }
  // Also before authentication, and under /api/v1.
  isError(
    t,
    fromNode(
      await nodeRequest(p.url, { method: 'GET', path: '/api/v1/team', headers: { authorization: `Bearer ${key}` } }),
    ),
    400,
    'validation_error',
  );
  t.is((await nodeRequest(p.url, { method: 'GET', path: '/health', headers: { 'user-agent': 'x' } })).status, 200);
});

test('an unknown route is 404 not_found, at / and under /api/v1', async (t) => {
  for (const path of [
    '/nope',
    '/api/v1/nope',
    '/api/v2/health',
    '/api-keys/x/y',
    '/api/v1/api-keys/x/y',
    '/',
    '/api/v1',
  ]) {
    isError(t, await p.request('GET', path, { key }), 404, 'not_found');
  }
});

test('a known path with another method is 405 method_not_allowed with an Allow header', async (t) => {
  for (const path of ['/api-keys', '/api/v1/api-keys']) {
    const res = await p.request('PUT', path, { key, body: {} });
    isError(t, res, 405, 'method_not_allowed');
    t.deepEqual(res.headers.get('allow')?.split(/,\s*/).sort(), ['GET', 'HEAD', 'POST']);
  }
  const health = await p.request('DELETE', '/health');
  isError(t, health, 405, 'method_not_allowed');
  t.deepEqual(health.headers.get('allow')?.split(/,\s*/).sort(), ['GET', 'HEAD']);
  // A method no route knows at all is answered the same way.
  const odd = await p.request('PROPFIND', '/api-keys', { key });
  isError(t, odd, 405, 'method_not_allowed');
  t.truthy(odd.headers.get('allow'));
  // OPTIONS names the methods in Allow with a JSON body.
  const options = await p.request('OPTIONS', '/api-keys');
  t.is(options.status, 200);
  t.deepEqual(options.body, {});
  t.deepEqual(options.headers.get('allow')?.split(/,\s*/).sort(), ['GET', 'HEAD', 'POST']);
});

test('a 500 leaves as application_error without the exception, its stack or its SQL', async (t) => {
  const failing = [
    defineOperation({
      operationId: 'testThrow',
      method: 'get',
      path: '/test/throw',
      tag: 'test',
      summary: 'throws',
      description: 'A test-only route.',
      permission: 'none',
      scope: null,
      response: z.object({}),
      handler: async () => {
        throw new Error('secret internals in /work/main/api/x.ts');
      },
    }),
    defineOperation({
      operationId: 'testSql',
      method: 'get',
      path: '/test/sql',
      tag: 'test',
      summary: 'bad SQL',
      description: 'A test-only route.',
      permission: 'full_access',
      scope: null,
      response: z.object({}),
      handler: async ({ deps }) => deps.db.raw('select secret_column from no_such_table where id = 1'),
    }),
    defineOperation({
      operationId: 'testShape',
      method: 'get',
      path: '/test/shape',
      tag: 'test',
      summary: 'off-schema',
      description: 'A test-only route.',
      permission: 'none',
      scope: null,
      response: z.object({ id: z.uuid() }),
      handler: async () => ({ id: 'not a uuid' }),
    }),
  ];
  const app: Served = await serve(createApp(p.deps, [...operations, ...failing]));
  t.teardown(() => app.close());
  for (const path of ['/test/throw', '/api/v1/test/sql', '/test/sql', '/test/shape']) {
    const res = await app.request('GET', path, { key });
    isError(t, res, 500, 'application_error');
    t.false(/secret|no_such_table|work\/main|\.ts|testShape|schema/.test(res.text), res.text);
    t.deepEqual(Object.keys(res.body).sort(), ['message', 'name', 'statusCode']);
  }
});

test('every 2xx has a JSON body; timestamps are ISO 8601 UTC with milliseconds', async (t) => {
  const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
  const created = await p.request('POST', '/api-keys', { key, body: { name: 'times' } });
  await p.request('GET', '/team', { key: created.body.token });
  const logId = (await p.request('GET', '/team', { key })).headers.get('x-request-log-id');
  const calls: [string, string, unknown?][] = [
    ['GET', '/health'],
    ['GET', '/ready'],
    ['GET', '/openapi.json'],
    ['GET', '/team'],
    ['GET', '/api-keys'],
    ['GET', `/api-keys/${created.body.id}`],
    ['PATCH', `/api-keys/${created.body.id}`, { name: 'renamed' }],
    ['GET', '/logs'],
    ['GET', `/logs/${logId}`],
    ['DELETE', `/api-keys/${created.body.id}`],
    ['GET', `/api-keys/${created.body.id}`],
  ];
  let timestamps = 0;
  const visit = (v: unknown, path: string): void => {
    if (Array.isArray(v)) v.forEach((x, i) => visit(x, `${path}[${i}]`));
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (/(_at|At)$/.test(k) && x !== null) {
          timestamps++;
          t.regex(String(x), iso, `${path}.${k}`);
        }
        if (!/^(request_body|response_body|paths|components)$/.test(k)) visit(x, `${path}.${k}`);
      }
    }
  };
  for (const [method, path, body] of [['POST', '/api-keys', { name: 'x' }] as const, ...calls]) {
    const res = await p.request(method, path, { key, body });
    t.true(res.status >= 200 && res.status < 300, `${method} ${path}: ${res.status}`);
    t.regex(res.headers.get('content-type') ?? '', /^application\/json/);
    t.true(res.text.length > 0);
    t.notThrows(() => JSON.parse(res.text));
    t.is(typeof res.body, 'object');
    t.is(res.headers.get('x-content-type-options'), 'nosniff');
    visit(res.body, `${method} ${path}`);
  }
  // created_at (team, keys, logs) and last_used_at at least.
  t.true(timestamps >= 10, String(timestamps));
});

test('error statuses all carry nosniff and the Error shape', async (t) => {
  const revoked = await p.request('POST', '/api-keys', { key, body: { name: 'gone' } });
  await p.request('DELETE', `/api-keys/${revoked.body.id}`, { key });
  const sending = await p.request('POST', '/api-keys', { key, body: { name: 's', permission: 'sending_access' } });
  isError(t, await p.request('GET', '/team'), 401, 'missing_api_key');
  isError(t, await p.request('GET', '/team', { headers: { authorization: 'Basic abc' } }), 403, 'invalid_api_key');
  isError(t, await p.request('GET', '/team', { key: 'rk_nope' }), 403, 'invalid_api_key');
  isError(t, await p.request('GET', '/team', { key: revoked.body.token }), 403, 'invalid_api_key');
  isError(t, await p.request('GET', '/team', { key: sending.body.token }), 401, 'restricted_api_key');
  isError(t, await p.request('GET', '/api-keys?limit=0', { key }), 422, 'validation_error');
  // An area not built yet (while one is left).
  const notYet = notYetOperations.find((o) => o.method === 'get');
  if (notYet) isError(t, await p.request('GET', fill(notYet.path, newId()), { key }), 501, 'not_implemented');
  isError(t, await p.request('POST', '/api-keys', { key, body: { name: 5 } }), 422, 'validation_error');
});
