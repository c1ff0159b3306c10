// The MCP server's tools are the operations (docs/mcp.md): through the SDK's client with an OAuth access token for
// /mcp (granted through the consent page's API calls, helpers/oauth.ts), `tools/list` for a token holding every scope
// is exactly the declared operations an OAuth scope reaches (built, JSON in and out); each tool's input is its
// operation's path and query parameters and body as the OpenAPI document has them, its title and description the
// operation's, naming its scope; a token with one scope lists only that scope's tools and is refused the others.
// Unknown tools, mistyped input, a notification (202) and a GET (405) too.
import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { freePort } from './helpers/ports.ts';
import { grantedToken } from './helpers/oauth.ts';
import { operations } from '../api/routes/index.ts';
import type { Operation } from '../api/routes/operation.ts';
import { scopeList } from '../shared/oauth/scopes.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let p: Platform;
let base: string;
let doc: Json;

test.before(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  p = await startPlatform({ PORT: String(port), PUBLIC_BASE_URL: base, OAUTH_REGISTRATIONS_PER_HOUR: '1000' });
  doc = (await p.request('GET', '/openapi.json')).body;
});
test.after.always(async () => {
  await p?.close();
});

/** The SDK's client on /mcp with a token a person granted for `scope` (bound to /mcp). */
async function mcpClient(email: string, scope: string): Promise<{ client: Client; token: string }> {
  const granted = await grantedToken(p.db, base, email, scope, `${base}/mcp`);
  if (granted.tokens.status !== 200) throw new Error(`token: ${granted.tokens.text}`);
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${granted.tokens.body.access_token}`, 'user-agent': 'mcp-t/1' } },
  });
  const client = new Client({ name: 'tools-host', version: '1.0.0' });
  await client.connect(transport);
  return { client, token: granted.tokens.body.access_token };
}

/**
 * What a tool stands for, said here from the declarations: an operation an OAuth scope reaches (x-service-scope not
 * null) that an API key reaches too (not a session's, not /mcp itself), built, taking and answering JSON (not a
 * download, not an upload).
 */
const isTool = (op: Operation) =>
  op.scope !== null &&
  ['full_access', 'sending_access', 'store_access'].includes(op.permission as string) &&
  !op.notImplemented &&
  !op.raw &&
  !op.bodyMedia;

/**
 * A schema reduced to what a caller must send: types, formats, enums, properties and which are required, items,
 * alternatives; references followed (in the document to components, in a tool to its $defs), a cycle cut by name.
 * Descriptions, patterns and bounds are left out (the document moves a parameter's description out of its schema).
 */
function shape(schema: Json | undefined, resolve: (ref: string) => Json, seen: string[] = []): unknown {
  if (!schema || typeof schema !== 'object') return schema;
  if (schema.$ref) {
    const name = String(schema.$ref).split('/').pop()!;
    return seen.includes(name) ? { cycle: name } : shape(resolve(schema.$ref), resolve, [...seen, name]);
  }
  const out: Json = {};
  for (const key of ['type', 'format', 'enum', 'const']) if (key in schema) out[key] = schema[key];
  if (schema.properties)
    out.properties = Object.fromEntries(
      Object.entries(schema.properties as Json).map(([k, v]) => [k, shape(v, resolve, seen)]),
    );
  if (schema.required?.length) out.required = [...schema.required].sort();
  if (schema.items) out.items = shape(schema.items, resolve, seen);
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object')
    out.additionalProperties = shape(schema.additionalProperties, resolve, seen);
  for (const key of ['anyOf', 'oneOf', 'allOf'])
    if (schema[key]) out[key] = (schema[key] as Json[]).map((s) => shape(s, resolve, seen));
  return out;
}

const inDocument = (ref: string) => doc.components.schemas[ref.replace('#/components/schemas/', '')];

/** The document's parameters of one kind as the object schema a tool's `path` or `query` is. */
function parametersOf(op: Json, where: 'path' | 'query'): unknown {
  const params = ((op.parameters ?? []) as Json[]).filter((x) => x.in === where);
  if (!params.length) return undefined;
  return {
    properties: Object.fromEntries(params.map((x) => [x.name, shape(x.schema, inDocument)])),
    required: params
      .filter((x) => x.required)
      .map((x) => x.name)
      .sort(),
  };
}

test('a token with every scope lists exactly the operations a scope reaches, each input as the document has it', async (t) => {
  t.timeout(120_000);
  const scopes = scopeList(operations.map((op) => op.scope));
  const { client } = await mcpClient('every-scope@people.test', scopes.join(' '));
  const { tools } = await client.listTools();
  const expected = operations.filter(isTool);
  t.true(expected.length > 80, `${expected.length} operations`);
  t.deepEqual(tools.map((tool) => tool.name).sort(), expected.map((op) => op.operationId).sort());
  // Operations no tool stands for, each for its reason.
  const names = new Set(tools.map((tool) => tool.name));
  for (const left of ['createApiKey', 'listOAuthGrants', 'revokeOAuthGrant', 'getTeam', 'mcpRequest', 'login'])
    t.false(names.has(left), `${left} is no tool`);
  t.true(
    operations.some((op) => op.notImplemented && op.scope),
    'an unbuilt scoped operation is left out (there is one)',
  );

  for (const tool of tools) {
    const op = expected.find((o) => o.operationId === tool.name)!;
    const documented = doc.paths[op.path][op.method];
    const what = `${tool.name} (${op.method.toUpperCase()} ${op.path})`;
    t.is(tool.title, documented.summary, `${what}: title`);
    t.true(tool.description!.startsWith(documented.description), `${what}: description`);
    t.true(tool.description!.includes(`Needs the OAuth scope \`${documented['x-service-scope']}\``), `${what}: scope`);
    t.is(tool.annotations?.readOnlyHint, op.method === 'get', `${what}: read-only when a GET`);
    const input = tool.inputSchema as Json;
    const inTool = (ref: string) => input.$defs[ref.replace('#/$defs/', '')];
    const part = (name: string) => {
      const schema = input.properties?.[name];
      if (!schema) return undefined;
      const reduced = shape(schema, inTool) as Json;
      return { properties: reduced.properties ?? {}, required: reduced.required ?? [] };
    };
    t.deepEqual(
      Object.keys(input.properties ?? {}).sort(),
      [
        ...(documented.parameters?.some((x: Json) => x.in === 'path') ? ['path'] : []),
        ...(documented.parameters?.some((x: Json) => x.in === 'query') ? ['query'] : []),
        ...(documented.requestBody ? ['body'] : []),
      ].sort(),
      `${what}: path, query, body as documented`,
    );
    t.deepEqual(part('path'), parametersOf(documented, 'path'), `${what}: path parameters`);
    t.deepEqual(part('query'), parametersOf(documented, 'query'), `${what}: query parameters`);
    const body = documented.requestBody?.content?.['application/json']?.schema;
    t.deepEqual(
      input.properties?.body && shape(input.properties.body, inTool),
      body && shape(body, inDocument),
      `${what}: body`,
    );
  }
});

test('a token with one scope lists only its tools; another is refused, an unknown one and bad input are errors', async (t) => {
  const { client, token } = await mcpClient('one-scope@people.test', 'domains:read');
  const { tools } = await client.listTools();
  const expected = operations.filter((op) => isTool(op) && op.scope === 'domains:read');
  t.true(expected.length >= 3);
  t.deepEqual(tools.map((tool) => tool.name).sort(), expected.map((op) => op.operationId).sort());

  t.false((await client.callTool({ name: 'listDomains', arguments: {} })).isError);
  const other = await client.callTool({ name: 'listEmails', arguments: {} });
  t.true(other.isError);
  t.like(other.structuredContent, { statusCode: 403, name: 'invalid_permission' });
  t.regex((other.structuredContent as { message: string }).message, /lacks the scope `emails:read`/);
  await t.throwsAsync(client.callTool({ name: 'noSuchTool', arguments: {} }), { message: /Unknown tool: noSuchTool/ });
  const typed = await client.callTool({ name: 'listDomains', arguments: { query: { limit: 'many' } } });
  t.true(typed.isError);
  t.like(typed.structuredContent, { statusCode: 422 });
  const path = await client.callTool({ name: 'getDomain', arguments: { path: { domain_id: 42 } } });
  t.true(path.isError, JSON.stringify(path.structuredContent));
  t.true([404, 422].includes((path.structuredContent as { statusCode: number }).statusCode));
  // Stateless Streamable HTTP: a notification is 202 without a body; no event stream to GET (405).
  const headers = {
    authorization: `Bearer ${token}`,
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'user-agent': 'mcp-t/1',
  };
  const note = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  t.is(note.status, 202);
  t.is(await note.text(), '');
  t.is((await fetch(`${base}/mcp`, { headers })).status, 405);
});
