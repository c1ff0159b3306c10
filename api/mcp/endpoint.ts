// The remote MCP server at /mcp (docs/mcp.md): the official SDK's Streamable HTTP transport, stateless (a server and
// a transport per request, answers as JSON), reached only with an OAuth access token bound to /mcp (RFC 8707); an
// API key, a token for the API, or none is a 401 whose WWW-Authenticate names the protected resource metadata
// (RFC 9728), also made here, for /mcp and for the API. The routes are declared in api/routes/mcp.ts (the router
// serves them; /mcp is the spec's `null` operation, its token checked here).
import { Readable } from 'node:stream';
import type { Context } from 'koa';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { ApiDeps, McpEndpoint } from '../deps.ts';
import { ServiceError } from '../../shared/errors.ts';
import type { Auth, Operation } from '../routes/operation.ts';
import { resources } from '../oauth/provider.ts';
import { buildTools, callTool, type McpTool } from './tools.ts';
import { readRawBody } from '../middleware/body.ts';
import { readStory, storyTemplate } from './resources.ts';
import { logCall } from './log.ts';

const PRM = '/.well-known/oauth-protected-resource';

/** The protected resource metadata (RFC 9728) of the API or of the MCP server. */
export function resourceMetadata(deps: ApiDeps, which: 'api' | 'mcp') {
  const resource = resources(deps.config)[which];
  const name = which === 'api' ? 'Postwerk API' : 'Postwerk MCP';
  return {
    resource,
    authorization_servers: [deps.config.PUBLIC_BASE_URL],
    scopes_supported: deps.oauth!.scopes,
    bearer_methods_supported: ['header'],
    resource_name: name,
    resource_documentation: `${deps.config.PUBLIC_BASE_URL}/docs`,
  };
}

/**
 * A 401 as the MCP authorization spec asks (RFC 6750's WWW-Authenticate naming the resource metadata, RFC 9728), its
 * body the Error shape every refusal has.
 */
function refuse(ctx: Context, deps: ApiDeps, name: Refusal, description: string) {
  const parts = [
    ...(name === 'missing_api_key'
      ? []
      : ['error="invalid_token"', `error_description="${description.replace(/"/g, "'")}"`]),
    `resource_metadata="${deps.config.PUBLIC_BASE_URL}${PRM}/mcp"`,
  ];
  ctx.status = 401;
  ctx.set('WWW-Authenticate', `Bearer ${parts.join(', ')}`);
  ctx.body = new ServiceError(name, description, { status: 401 }).toBody();
}

type Refusal = 'missing_api_key' | 'restricted_api_key' | 'invalid_api_key' | 'suspended_api_key';

/** The caller of /mcp, or undefined after answering 401. */
async function authenticate(ctx: Context, deps: ApiDeps): Promise<Auth | undefined> {
  const token = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'))?.[1];
  if (!token)
    return void refuse(ctx, deps, 'missing_api_key', 'An OAuth access token for this MCP server is required.');
  if (token.startsWith('rk_'))
    return void refuse(ctx, deps, 'restricted_api_key', 'API keys are not accepted here: use an OAuth access token.');
  const caller = await deps.oauth!.verify(token);
  if (!caller) return void refuse(ctx, deps, 'invalid_api_key', 'The access token is invalid, expired or revoked.');
  const mcp = resources(deps.config).mcp;
  if (caller.audience !== mcp)
    return void refuse(
      ctx,
      deps,
      'invalid_api_key',
      `The access token was issued for another resource; ask for resource=${mcp}.`,
    );
  if (caller.team.status === 'suspended')
    return void refuse(ctx, deps, 'suspended_api_key', 'The team of this access token is suspended.');
  return { key: null, team: caller.team, oauth: caller };
}

/**
 * One JSON Schema validator for every request's server: the SDK makes an Ajv instance per server when given none,
 * which was half of an MCP call's CPU (bench/README.md, the oauth suite).
 */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

function mcpServer(deps: ApiDeps, tools: McpTool[], ctx: Context, auth: Auth): Server {
  const server = new Server(
    { name: 'postwerk', version: deps.version },
    { capabilities: { tools: {}, resources: {} }, jsonSchemaValidator },
  );
  // The tools this token's scopes reach; a call of another is answered with its invalid_permission.
  const reachable = tools.filter((t) => auth.oauth!.scopes.has(t.op.scope!));
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: reachable.map(({ name, title, description, inputSchema, annotations }) => ({
      name,
      title,
      description,
      inputSchema: inputSchema as { type: 'object' },
      annotations,
    })),
  }));
  // Each call and read is a request log of the team (GET /logs), under the token's grant.
  server.setRequestHandler(CallToolRequestSchema, async (request) =>
    logCall(deps, ctx, auth, `/mcp/tools/${request.params.name}`, request.params.arguments, async () => {
      const tool = tools.find((t) => t.name === request.params.name);
      if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
      return callTool(tool, request.params.arguments, ctx, deps, auth);
    }),
  );
  // The resources are per email: none to list, one template to fill (resources.ts).
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [] }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [storyTemplate] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) =>
    logCall(deps, ctx, auth, `/mcp/resources/${storyTemplate.name}`, request.params, () =>
      readStory(deps.db, auth, request.params.uri),
    ),
  );
  return server;
}

/** The MCP server of `ops`: its tools are the operations an OAuth scope reaches (tools.ts), built on first use. */
export function mcpEndpoint(deps: ApiDeps, ops: Operation[]): McpEndpoint {
  let tools: McpTool[] | undefined;
  return async function mcp(ctx: Context) {
    const auth = await authenticate(ctx, deps);
    if (!auth) return;
    tools ??= buildTools(ops);
    const server = mcpServer(deps, tools, ctx, auth);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      await answerWith(ctx, await transport.handleRequest(await webRequest(ctx, deps)));
    } finally {
      await transport.close();
      await server.close();
    }
  };
}

/**
 * The request as the SDK's web-standard transport takes it, its body read as every route's is (the same limit):
 * where the SDK's Node transport converts the whole exchange through web streams (@hono/node-server).
 */
async function webRequest(ctx: Context, deps: ApiDeps): Promise<Request> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const raw = ctx.method === 'POST' ? await readRawBody(ctx, deps.config.BODY_LIMIT_BYTES) : undefined;
  const body = raw?.toString('utf8');
  return new Request(new URL(ctx.url, deps.config.PUBLIC_BASE_URL), { method: ctx.method, headers, body });
}

/** The transport's answer as Koa's: JSON in one piece, an event stream (if any) streamed. */
async function answerWith(ctx: Context, response: Response): Promise<void> {
  response.headers.forEach((value, name) => ctx.set(name, value));
  if (!response.body) {
    // Body first: Koa turns a null body's status into 204, and a notification's answer is 202 (Streamable HTTP).
    ctx.body = null;
    ctx.status = response.status;
    return;
  }
  ctx.status = response.status;
  const type = response.headers.get('content-type') ?? '';
  ctx.body = type.startsWith('text/event-stream')
    ? Readable.fromWeb(response.body as import('node:stream/web').ReadableStream)
    : Buffer.from(await response.arrayBuffer());
}
