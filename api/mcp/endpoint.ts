// The remote MCP server at /mcp (docs/mcp.md): the official SDK's Streamable HTTP transport, stateless (a server and
// a transport per request, answers as JSON), reached only with an OAuth access token bound to /mcp (RFC 8707); an
// API key, a token for the API, or none is a 401 whose WWW-Authenticate names the protected resource metadata
// (RFC 9728), which this file also serves, for /mcp and for the API.
import type { Context, Next } from 'koa';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ApiDeps } from '../deps.ts';
import type { Auth, Operation } from '../routes/operation.ts';
import { resources } from '../oauth/provider.ts';
import { buildTools, callTool, type McpTool } from './tools.ts';

const PRM = '/.well-known/oauth-protected-resource';

function metadata(deps: ApiDeps, resource: string, name: string) {
  return {
    resource,
    authorization_servers: [deps.config.PUBLIC_BASE_URL],
    scopes_supported: deps.oauth!.scopes,
    bearer_methods_supported: ['header'],
    resource_name: name,
    resource_documentation: `${deps.config.PUBLIC_BASE_URL}/docs`,
  };
}

function refuse(ctx: Context, deps: ApiDeps, description: string, error?: 'invalid_token') {
  const parts = [
    ...(error ? [`error="${error}"`, `error_description="${description.replace(/"/g, "'")}"`] : []),
    `resource_metadata="${deps.config.PUBLIC_BASE_URL}${PRM}/mcp"`,
  ];
  ctx.status = 401;
  ctx.set('WWW-Authenticate', `Bearer ${parts.join(', ')}`);
  ctx.body = { error: error ?? 'unauthorized', error_description: description };
}

/** The caller of /mcp, or undefined after answering 401. */
async function authenticate(ctx: Context, deps: ApiDeps): Promise<Auth | undefined> {
  const token = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'))?.[1];
  if (!token) return void refuse(ctx, deps, 'An OAuth access token for this MCP server is required.');
  if (token.startsWith('rk_'))
    return void refuse(ctx, deps, 'API keys are not accepted here: use an OAuth access token.', 'invalid_token');
  const caller = await deps.oauth!.verify(token);
  if (!caller) return void refuse(ctx, deps, 'The access token is invalid, expired or revoked.', 'invalid_token');
  const mcp = resources(deps.config).mcp;
  if (caller.audience !== mcp)
    return void refuse(
      ctx,
      deps,
      `The access token was issued for another resource; ask for resource=${mcp}.`,
      'invalid_token',
    );
  if (caller.team.status === 'suspended')
    return void refuse(ctx, deps, 'The team of this access token is suspended.', 'invalid_token');
  return { key: null, team: caller.team, oauth: caller };
}

function mcpServer(deps: ApiDeps, tools: McpTool[], ctx: Context, auth: Auth): Server {
  const server = new Server({ name: 'postwerk', version: deps.version }, { capabilities: { tools: {} } });
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
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = tools.find((t) => t.name === request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    return callTool(tool, request.params.arguments, ctx, deps, auth);
  });
  return server;
}

export function mcpEndpoint(deps: ApiDeps, ops: Operation[]) {
  let tools: McpTool[] | undefined;
  return async function mcp(ctx: Context, next: Next) {
    if (ctx.method === 'GET' && (ctx.path === `${PRM}/mcp` || ctx.path === PRM)) {
      const targets = resources(deps.config);
      ctx.body =
        ctx.path === PRM ? metadata(deps, targets.api, 'Postwerk API') : metadata(deps, targets.mcp, 'Postwerk MCP');
      return;
    }
    if (ctx.path !== '/mcp') return next();
    ctx.state.route = '/mcp';
    const auth = await authenticate(ctx, deps);
    if (!auth) return;
    tools ??= buildTools(ops);
    const server = mcpServer(deps, tools, ctx, auth);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    ctx.respond = false;
    try {
      await transport.handleRequest(ctx.req, ctx.res);
    } finally {
      await transport.close();
      await server.close();
    }
    ctx.status = ctx.res.statusCode;
  };
}
