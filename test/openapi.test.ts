// The OpenAPI document: its shape, its agreement with what the router actually serves, and with real responses.
import test from 'ava';
import { operations } from '../api/routes/index.ts';
import { buildRouter } from '../api/router.ts';
import { buildOpenApi } from '../api/openapi.ts';
import { defineOperation } from '../api/routes/operation.ts';
import { z } from 'zod';
import { startPlatform, type Platform, type TestResponse } from './helpers/platform.ts';
import { checkSchema } from './helpers/json-schema.ts';
import { nodeRequest } from './helpers/http.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const PERMISSIONS = ['sending_access', 'store_access', 'full_access', 'session', 'none', null];

let p: Platform;
let doc: Json;

test.before(async () => {
  p = await startPlatform();
  const res = await p.request('GET', '/openapi.json');
  if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}: ${res.text}`);
  doc = res.body;
});

test.after.always(async () => {
  await p?.close();
});

function documented(): { method: string; path: string; op: Json }[] {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([m]) => METHODS.includes(m))
      .map(([method, op]) => ({ method, path, op: op as Json })),
  );
}

/** The document's schema checker (helpers/json-schema.ts): `#/components/schemas/...` references resolve in `doc`. */
const validate = (schema: Json, value: unknown): string[] => checkSchema(doc.components.schemas, schema, value);

function responseSchema(method: string, path: string, status: number): Json {
  const op = doc.paths[path]?.[method];
  if (!op) throw new Error(`${method.toUpperCase()} ${path} is not documented`);
  const named = op.responses[String(status)];
  if (!named) throw new Error(`${method.toUpperCase()} ${path} documents no ${status} response`);
  // The shared error answers are references into components.responses.
  const response = named.$ref ? doc.components.responses[named.$ref.replace('#/components/responses/', '')] : named;
  return response.content['application/json'].schema;
}

function matchesDocument(
  t: { deepEqual: (a: unknown, b: unknown, m?: string) => void },
  method: string,
  path: string,
  res: TestResponse,
) {
  t.deepEqual(
    validate(responseSchema(method, path, res.status), res.body),
    [],
    `${method.toUpperCase()} ${path} → ${res.status}: ${res.text}`,
  );
}

test('GET /openapi.json needs no key (only a User-Agent): OpenAPI 3.1.0, document version 1.0.0', async (t) => {
  t.is(doc.openapi, '3.1.0');
  t.is(doc.info.version, '1.0.0');
  t.truthy(doc.info.title);
  const v1 = await p.request('GET', '/api/v1/openapi.json');
  t.is(v1.status, 200);
  t.deepEqual(v1.body, doc);
  const noAgent = await nodeRequest(p.url, { method: 'GET', path: '/openapi.json' }); // no User-Agent
  t.is(noAgent.status, 400);
  t.is(noAgent.body.name, 'validation_error');
});

test('every operation has a unique operationId, tags, x-service-permission, x-service-scope and a JSON 2xx response', (t) => {
  const ops = documented();
  t.is(ops.length, operations.length);
  const ids = new Map<string, string>();
  for (const { method, path, op } of ops) {
    const what = `${method.toUpperCase()} ${path}`;
    t.is(typeof op.operationId, 'string', `${what}: operationId`);
    t.false(ids.has(op.operationId), `${what}: operationId ${op.operationId} also used by ${ids.get(op.operationId)}`);
    ids.set(op.operationId, what);
    t.true(
      Array.isArray(op.tags) && op.tags.length > 0 && op.tags.every((x: unknown) => typeof x === 'string' && x),
      `${what}: tags`,
    );
    t.true('x-service-permission' in op, `${what}: x-service-permission`);
    t.true(
      PERMISSIONS.includes(op['x-service-permission']),
      `${what}: x-service-permission ${op['x-service-permission']}`,
    );
    t.true('x-service-scope' in op, `${what}: x-service-scope`);
    t.true(
      op['x-service-scope'] === null ||
        (typeof op['x-service-scope'] === 'string' && /^[a-z-]+:[a-z-]+$/.test(op['x-service-scope'])),
      `${what}: x-service-scope ${op['x-service-scope']}`,
    );
    const success = Object.entries(op.responses as Record<string, Json>).filter(([code]) => /^2\d\d$/.test(code));
    t.true(success.length > 0, `${what}: a 2xx response`);
    for (const [code, r] of success)
      t.is(typeof r.content?.['application/json']?.schema, 'object', `${what}: ${code} has a JSON schema`);
    // Path parameters are documented as such.
    const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
    const params = ((op.parameters ?? []) as Json[]).filter((x) => x.in === 'path');
    t.deepEqual(params.map((x) => x.name).sort(), inPath, `${what}: path parameters`);
    t.true(
      params.every((x) => x.required === true),
      `${what}: path parameters are required`,
    );
  }
});

test('the document says what the declarations say', (t) => {
  for (const op of operations) {
    const documentedOp = doc.paths[op.path]?.[op.method];
    t.truthy(documentedOp, `${op.method} ${op.path} is documented`);
    t.is(documentedOp?.operationId, op.operationId);
    t.is(documentedOp?.['x-service-permission'], op.permission, `${op.operationId}: permission`);
    t.is(documentedOp?.['x-service-scope'], op.scope, `${op.operationId}: scope`);
    t.deepEqual(documentedOp?.tags, [op.tag]);
    if (op.permission === 'none') t.deepEqual(documentedOp?.security, [], `${op.operationId}: no security`);
    else if (op.permission === 'session')
      t.deepEqual(documentedOp?.security, [{ sessionCookie: [] }], `${op.operationId}: the session cookie`);
    else if (op.permission === null)
      t.deepEqual(documentedOp?.security, [{ oauth2: [] }], `${op.operationId}: an OAuth access token only`);
    else t.is(documentedOp?.security, undefined, `${op.operationId}: the document's bearer security applies`);
  }
});

test('the document describes /mcp (null: OAuth only), the protected resource metadata, and the oauth2 scheme', async (t) => {
  // The one `null` operation (spec, Authentication 2): /mcp, an OAuth access token its only credential.
  const nulls = documented().filter(({ op }) => op['x-service-permission'] === null);
  t.deepEqual(
    nulls.map(({ method, path }) => method + ' ' + path),
    ['post /mcp'],
  );
  const mcp = doc.paths['/mcp'].post;
  t.like(mcp, { tags: ['mcp'], 'x-service-scope': null, security: [{ oauth2: [] }] });
  t.is(mcp.requestBody.content['application/json'].schema.$ref, '#/components/schemas/McpRequest');
  t.truthy(mcp.responses['401'].headers['WWW-Authenticate']);
  const refused = await p.request('POST', '/mcp', { body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
  t.is(refused.status, 401);
  t.regex(refused.headers.get('www-authenticate') ?? '', /resource_metadata="[^"]+\/oauth-protected-resource\/mcp"/);
  matchesDocument(t, 'post', '/mcp', refused);

  // The protected resource metadata (RFC 9728) of the API and of /mcp: documented, no credential, as answered.
  const resources: Json = {};
  for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
    t.deepEqual(doc.paths[path].get.security, [], path);
    const res = await p.request('GET', path);
    t.is(res.status, 200, res.text);
    matchesDocument(t, 'get', path, res);
    resources[path] = res.body;
  }
  t.is(resources['/.well-known/oauth-protected-resource/mcp'].resource, `${p.config.PUBLIC_BASE_URL}/mcp`);

  // The oauth2 scheme: authorization code at the authorization server's own endpoints, with every scope it offers.
  const scheme = doc.components.securitySchemes.oauth2;
  const server = (await p.request('GET', '/.well-known/oauth-authorization-server')).body;
  t.is(scheme.type, 'oauth2');
  t.regex(scheme.description, /PKCE/);
  // Its endpoints named at the issuer (PUBLIC_BASE_URL); the metadata names them at the host it was asked on.
  const flow = scheme.flows.authorizationCode;
  const path = (url: string) => new URL(url).pathname;
  t.deepEqual(
    [flow.authorizationUrl, flow.tokenUrl, flow.refreshUrl].map((url) => new URL(url).origin + path(url)),
    [server.authorization_endpoint, server.token_endpoint, server.token_endpoint].map(
      (url) => server.issuer + path(url),
    ),
  );
  const scopes = Object.keys(flow.scopes);
  t.deepEqual(
    scopes.filter((s) => s !== 'offline_access').sort(),
    [...resources['/.well-known/oauth-protected-resource'].scopes_supported].sort(),
  );
  for (const scope of scopes) t.true(server.scopes_supported.includes(scope), `${scope} offered by the server`);
  t.true(scopes.includes('emails:send') && scopes.includes('billing:read'));
  t.regex(doc.components.securitySchemes.bearerAuth.description, /OAuth access token.*x-service-scope/);
});

test('every $ref in the document resolves', (t) => {
  const refs: string[] = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string') refs.push(v);
        else walk(v);
      }
    }
  };
  walk(doc);
  t.true(refs.length > 0);
  for (const ref of new Set(refs)) {
    const m = /^#\/components\/(schemas|responses)\/(.+)$/.exec(ref);
    t.truthy(m && doc.components[m[1]][m[2]], `unresolved ${ref}`);
  }
});

test('the router serves exactly the documented operations, at / and under /api/v1', (t) => {
  const router = buildRouter(operations, p.deps);
  const served = new Map<string, Set<string>>([
    ['', new Set()],
    ['/api/v1', new Set()],
  ]);
  for (const layer of router.stack) {
    t.is(typeof layer.path, 'string');
    const raw = String(layer.path);
    const base = raw.startsWith('/api/v1/') ? '/api/v1' : '';
    const path = raw.slice(base.length).replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const methods = layer.methods.map((m) => m.toLowerCase());
    for (const method of methods) {
      if (method === 'head' && methods.includes('get')) continue; // @koa/router answers HEAD for every GET
      served.get(base)!.add(`${method} ${path}`);
    }
  }
  const inDocument = new Set(documented().map(({ method, path }) => `${method} ${path}`));
  t.true(inDocument.size > 100);
  for (const [base, routes] of served) {
    for (const route of routes) t.true(inDocument.has(route), `served at "${base}" but not documented: ${route}`);
    for (const route of inDocument) t.true(routes.has(route), `documented but not served at "${base}": ${route}`);
  }
});

/** The request fields of `op` (parameters, then body properties at any depth) that have no description. */
function undescribed(document: Json, op: Json): string[] {
  const missing: string[] = [];
  const component = (ref: string): Json => document.components.schemas[ref.replace('#/components/schemas/', '')];
  for (const param of (op.parameters ?? []) as Json[])
    if (!param.description?.trim()) missing.push(`${param.in} parameter ${param.name}`);
  const walk = (schema: Json | undefined, at: string, seen: Set<string>) => {
    if (!schema || typeof schema !== 'object') return;
    if (schema.$ref) {
      if (seen.has(schema.$ref)) return;
      return walk(component(schema.$ref), at, new Set([...seen, schema.$ref]));
    }
    for (const key of ['anyOf', 'oneOf', 'allOf'])
      for (const [i, alternative] of ((schema[key] ?? []) as Json[]).entries()) walk(alternative, `${at}<${i}>`, seen);
    walk(schema.items, `${at}[]`, seen);
    if (typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, `${at}{}`, seen);
    for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) {
      const description = property.description ?? (property.$ref ? component(property.$ref)?.description : undefined);
      if (!description?.trim()) missing.push(`${at}.${name}`);
      walk(property, `${at}.${name}`, seen);
    }
  };
  walk(op.requestBody?.content?.['application/json']?.schema, 'body', new Set());
  return missing;
}

test('every operation has a summary and a description, and every request field a description', (t) => {
  const ops = documented();
  t.is(ops.length, operations.length);
  for (const { method, path, op } of ops) {
    const what = `${method.toUpperCase()} ${path}`;
    t.true(typeof op.summary === 'string' && op.summary.trim().length > 0, `${what}: summary`);
    t.true(typeof op.description === 'string' && op.description.trim().length > 0, `${what}: description`);
    t.not(op.description, op.summary, `${what}: the description says more than the summary`);
    t.deepEqual(undescribed(doc, op), [], `${what}: request fields without a description`);
  }
  for (const tag of doc.tags as Json[]) t.truthy(tag.description?.trim(), `tag ${tag.name}: description`);
});

test('the description check finds an undescribed field at any depth', (t) => {
  // Without this, a walker that looked at nothing would make the test above pass for nothing.
  const probe = defineOperation({
    operationId: 'probe',
    method: 'post',
    path: '/probe/{id}',
    tag: 'operations',
    summary: 'Probe',
    description: 'A test-only route.',
    permission: 'none',
    scope: null,
    params: z.object({ id: z.string() }),
    query: z.object({ q: z.string().optional().describe('described') }),
    body: z.object({
      top: z.string(),
      list: z.array(z.object({ deep: z.number().describe('described'), deeper: z.boolean() })).describe('described'),
      either: z.union([z.string(), z.object({ inner: z.string() })]).describe('described'),
    }),
    response: z.object({}),
    handler: async () => ({}),
  });
  const probeDoc = buildOpenApi([probe], { version: '0', serverUrl: 'http://127.0.0.1' }) as Json;
  t.deepEqual(undescribed(probeDoc, probeDoc.paths['/probe/{id}'].post), [
    'path parameter id',
    'body.top',
    'body.list[].deeper',
    'body.either<1>.inner',
  ]);
});

test('the send operations and segment creation have request examples, each accepted by the body schema the api parses with', (t) => {
  for (const [path, operationId] of [
    ['/emails', 'sendEmail'],
    ['/emails/batch', 'sendBatch'],
    ['/segments', 'createSegment'],
  ]) {
    const declared = operations.find((o) => o.operationId === operationId)!;
    const media = doc.paths[path].post.requestBody.content['application/json'];
    const examples = Object.entries((media.examples ?? {}) as Record<string, Json>);
    t.true(examples.length > 0, `POST ${path}: an example`);
    for (const [name, example] of examples) {
      t.truthy(example.summary, `POST ${path} example ${name}: summary`);
      const parsed = (declared.bodyDoc ?? declared.body)!.safeParse(example.value);
      t.true(parsed.success, `POST ${path} example ${name}: ${JSON.stringify(parsed.error?.issues)}`);
      t.deepEqual(validate(media.schema, example.value), [], `POST ${path} example ${name} matches the document`);
    }
  }
});

test('the schema checker used below refuses what does not match', (t) => {
  // Without this, a checker that accepted everything would make the next test pass for nothing.
  t.not(validate({ $ref: '#/components/schemas/Team' }, {}).length, 0);
  t.not(validate({ $ref: '#/components/schemas/ApiKey' }, { object: 'api_key', id: 'nope' }).length, 0);
  t.not(
    validate({ $ref: '#/components/schemas/Error' }, { statusCode: 404, name: 'not_found', message: 'x', extra: 1 })
      .length,
    0,
  );
  t.not(validate({ $ref: '#/components/schemas/Health' }, { status: 'fine', version: '1', env: 'test' }).length, 0);
});

test('real responses of implemented routes match the document (the router also checks them in NODE_ENV=test)', async (t) => {
  const team = await p.createTeam();
  const key = team.key;
  matchesDocument(t, 'get', '/health', await p.request('GET', '/health'));
  matchesDocument(t, 'get', '/ready', await p.request('GET', '/ready'));
  const got = await p.request('GET', '/team', { key });
  t.is(got.status, 200);
  matchesDocument(t, 'get', '/team', got);

  const created = await p.request('POST', '/api-keys', { key, body: { name: 'doc', permission: 'sending_access' } });
  t.is(created.status, 201);
  matchesDocument(t, 'post', '/api-keys', created);
  const id = created.body.id;
  const one = await p.request('GET', `/api-keys/${id}`, { key });
  t.is(one.status, 200);
  matchesDocument(t, 'get', '/api-keys/{id}', one);
  matchesDocument(
    t,
    'patch',
    '/api-keys/{id}',
    await p.request('PATCH', `/api-keys/${id}`, { key, body: { name: 'renamed' } }),
  );
  const list = await p.request('GET', '/api-keys?limit=5', { key });
  t.is(list.body.data.length, 2);
  matchesDocument(t, 'get', '/api-keys', list);
  matchesDocument(t, 'delete', '/api-keys/{id}', await p.request('DELETE', `/api-keys/${id}`, { key }));

  const logs = await p.request('GET', '/logs', { key });
  t.true(logs.body.data.length > 0);
  matchesDocument(t, 'get', '/logs', logs);
  const log = await p.request('GET', `/logs/${logs.body.data[0].id}`, { key });
  t.is(log.status, 200);
  matchesDocument(t, 'get', '/logs/{id}', log);

  // Errors answer the documented Error shape.
  const missing = await p.request('GET', `/api-keys/${logs.body.data[0].id}`, { key });
  t.is(missing.status, 404);
  matchesDocument(t, 'get', '/api-keys/{id}', missing);
  const invalid = await p.request('POST', '/api-keys', { key, body: { name: 7 } });
  t.is(invalid.status, 422);
  matchesDocument(t, 'post', '/api-keys', invalid);
  const unauthenticated = await p.request('GET', '/team');
  t.is(unauthenticated.status, 401);
  matchesDocument(t, 'get', '/team', unauthenticated);
  const domains = await p.request('GET', '/domains', { key });
  t.is(domains.status, 200);
  matchesDocument(t, 'get', '/domains', domains);
  const domain = await p.request('GET', `/domains/${domains.body.data[0].id}`, { key });
  t.is(domain.status, 200);
  matchesDocument(t, 'get', '/domains/{domain_id}', domain);
  const document = {
    blocks: [
      { id: 'a', type: 'text', text: 'Hi {{{NAME}}}' },
      { id: 'f', type: 'footer' },
    ],
  };
  const variables = [{ key: 'NAME', type: 'string', fallback_value: 'you' }];
  const made = await p.request('POST', '/templates', { key, body: { name: 'Doc', variables, document } });
  t.is(made.status, 201);
  const template = await p.request('GET', `/templates/${made.body.id}`, { key });
  t.is(template.status, 200);
  matchesDocument(t, 'get', '/templates/{id_or_alias}', template);
  const checks = await p.request('POST', `/templates/${made.body.id}/checks`, { key, body: {} });
  matchesDocument(t, 'post', '/templates/{id_or_alias}/checks', checks);
  const pending = await p.request('GET', '/automations', { key });
  t.is(pending.status, 501);
  matchesDocument(t, 'get', '/automations', pending);
});
