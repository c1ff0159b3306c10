// The MCP server at /mcp and the protected resource metadata (RFC 9728) of it and of the API (docs/mcp.md). /mcp is
// the spec's `null` operation (Authentication 2): no API key or session reaches it, only an OAuth access token bound
// to it (RFC 8707), which api/mcp/endpoint.ts checks before the SDK's transport answers.
import { z } from 'zod';
import { defineOperation } from './operation.ts';
import { resourceMetadata } from '../mcp/endpoint.ts';

const metadata = z
  .object({
    resource: z.string().describe('The protected resource: this API (`/`) or its MCP server (`/mcp`)'),
    authorization_servers: z
      .array(z.string())
      .describe('This server: its metadata is at /.well-known/oauth-authorization-server'),
    scopes_supported: z.array(z.string()),
    bearer_methods_supported: z.array(z.string()),
    resource_name: z.string(),
    resource_documentation: z.string(),
  })
  .meta({ id: 'ProtectedResourceMetadata' });

const mcpRequest = z
  .object({
    jsonrpc: z.literal('2.0').describe('Always `2.0`'),
    id: z
      .union([z.string(), z.number().int()])
      .optional()
      .describe('The request id its answer carries; absent in a notification (answered 202, no body)'),
    method: z
      .string()
      .describe(
        'An MCP method: `initialize`, `ping`, `tools/list`, `tools/call`, `resources/list`, `resources/templates/list`, `resources/read`; or a notification (`notifications/initialized`)',
      ),
    params: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        "The method's parameters (the MCP specification); `tools/call`: `{name, arguments: {path, query, body}}`",
      ),
  })
  .meta({ id: 'McpRequest' });

const mcpResponse = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number()]).nullable(),
    result: z.record(z.string(), z.unknown()).optional(),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).optional(),
  })
  .meta({ id: 'McpResponse' });

export const mcpOperations = [
  defineOperation({
    operationId: 'getApiResourceMetadata',
    method: 'get',
    path: '/.well-known/oauth-protected-resource',
    tag: 'oauth',
    summary: 'Protected resource metadata of the API',
    description:
      'The API as an OAuth protected resource (RFC 9728): its resource indicator (`/`, the one tokens for the API are bound to), this authorization server, the scopes. No credential.',
    permission: 'none',
    scope: null,
    response: metadata,
    handler: async ({ deps }) => resourceMetadata(deps, 'api'),
  }),
  defineOperation({
    operationId: 'getMcpResourceMetadata',
    method: 'get',
    path: '/.well-known/oauth-protected-resource/mcp',
    tag: 'mcp',
    summary: 'Protected resource metadata of the MCP server',
    description:
      'The MCP server as an OAuth protected resource (RFC 9728): its resource indicator (`/mcp`), this authorization server, the scopes. A 401 of /mcp names this URL in its `WWW-Authenticate`, so an MCP client finds the authorization server from there. No credential.',
    permission: 'none',
    scope: null,
    response: metadata,
    handler: async ({ deps }) => resourceMetadata(deps, 'mcp'),
  }),
  defineOperation({
    operationId: 'mcpRequest',
    method: 'post',
    path: '/mcp',
    tag: 'mcp',
    summary: 'The MCP server (Streamable HTTP)',
    description: [
      'The remote Model Context Protocol server: one JSON-RPC message a request, answered as JSON (stateless: no session id, no event stream; `GET` is 405). Send `Accept: application/json, text/event-stream`.',
      'Only an OAuth access token bound to `/mcp` (the `resource` parameter, RFC 8707) reaches it: none, an API key, or a token for the API, expired or revoked, is 401 with a `WWW-Authenticate` naming the protected resource metadata (`/.well-known/oauth-protected-resource/mcp`).',
      "Its tools are this document's operations that an OAuth scope reaches, each named by its `operationId`, its input `{path, query, body}` the operation's own schemas; a token lists and calls only those of its scopes. One resource template, `postwerk://emails/{email_id}/story`, tells what happened to an email (docs/mcp.md).",
    ].join('\n\n'),
    permission: null,
    scope: null,
    oauthOnly: true,
    raw: true,
    bodyDoc: mcpRequest,
    response: mcpResponse,
    handler: async ({ ctx, deps }) => {
      await deps.mcp!(ctx);
      return undefined as never; // raw: the transport's answer is on ctx already
    },
  }),
];
