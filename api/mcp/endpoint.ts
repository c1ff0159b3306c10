// The remote MCP server at /mcp (docs/mcp.md): the official SDK's Streamable HTTP transport, stateless (a server and
// a transport per request, answers as JSON), reached only with an OAuth access token bound to /mcp (RFC 8707); an
// API key, a token for the API, or none is a 401 whose WWW-Authenticate names the protected resource metadata
// (RFC 9728), also made here, for /mcp and for the API. The routes are declared in api/routes/mcp.ts (the router
// serves them; /mcp is the spec's `null` operation, its token checked here). The SDK's side (session.ts, some 130
// modules) is loaded on the first call, not with every api process and test.
import type { Context } from 'koa';
import type { ApiDeps, McpEndpoint } from '../deps.ts';
import { ServiceError } from '../../shared/errors.ts';
import type { Auth, Operation } from '../routes/operation.ts';
import { resources } from '../oauth/provider.ts';
import { buildTools, type McpTool } from './tools.ts';

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

/** The MCP server of `ops`: its tools are the operations an OAuth scope reaches (tools.ts), built on first use. */
export function mcpEndpoint(deps: ApiDeps, ops: Operation[]): McpEndpoint {
  let tools: McpTool[] | undefined;
  let session: Promise<typeof import('./session.ts')> | undefined;
  return async function mcp(ctx: Context) {
    const auth = await authenticate(ctx, deps);
    if (!auth) return;
    tools ??= buildTools(ops);
    const { answerMcp } = await (session ??= import('./session.ts'));
    await answerMcp(deps, tools, ctx, auth);
  };
}
