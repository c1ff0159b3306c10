// One call of the MCP server (endpoint.ts checks its token first): a server and a Streamable HTTP transport of the
// official SDK for this request alone (stateless, answers as JSON), the tools the token's scopes reach, each call and
// read logged as a request of the team. Loaded by endpoint.ts on the first call.
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
import type { ApiDeps } from '../deps.ts';
import type { Auth } from '../routes/operation.ts';
import { callTool, type McpTool } from './tools.ts';
import { readRawBody } from '../middleware/body.ts';
import { readStory, storyTemplate } from './resources.ts';
import { logCall } from './log.ts';

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

/** Answers `ctx`, an MCP request of `auth`, with a server and transport of its own. */
export async function answerMcp(deps: ApiDeps, tools: McpTool[], ctx: Context, auth: Auth): Promise<void> {
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
