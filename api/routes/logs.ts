import { z } from 'zod';
import { getLog, listLogs, type RequestLogRow } from '../../shared/logs/logs.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { isoRequired } from '../../shared/time.ts';
import { defineOperation } from './operation.ts';
import { idParams, timestamp } from './schemas.ts';

const logItem = z
  .object({
    id: z.uuid(),
    created_at: timestamp,
    endpoint: z.string(),
    method: z.string(),
    response_status: z.number().int(),
    user_agent: z.string().nullable(),
    duration_ms: z.number().int(),
    oauth_grant_id: z
      .uuid()
      .nullable()
      .describe(
        'The OAuth grant (GET /oauth/grants) whose access token made the request, an MCP tool call included (its `endpoint` is `/mcp/tools/<tool name>`); null for a request made with an API key.',
      ),
  })
  .meta({ id: 'LogListItem' });

const log = logItem
  .extend({
    object: z.literal('log'),
    request_body: z.unknown().describe('The request body as received, secrets redacted; null when none.'),
    response_body: z.unknown().describe('The response body as sent, secrets (such as new tokens) redacted.'),
  })
  .meta({ id: 'Log' });

function item(row: RequestLogRow): z.input<typeof logItem> {
  return {
    id: row.id,
    created_at: isoRequired(row.created_at),
    endpoint: row.endpoint,
    method: row.method,
    response_status: row.response_status,
    user_agent: row.user_agent,
    duration_ms: row.duration_ms,
    oauth_grant_id: row.oauth_grant_id ?? null,
  };
}

const base = { tag: 'logs', permission: 'full_access', scope: 'logs:read' } as const;

export const logOperations = [
  defineOperation({
    ...base,
    operationId: 'listLogs',
    method: 'get',
    path: '/logs',
    summary: 'List request logs',
    description:
      "List the requests made with the team's credentials (API keys and OAuth access tokens, MCP tool calls included), newest first.",
    query: listQuery,
    response: listEnvelope(logItem),
    handler: async ({ auth, query, deps }) => {
      await deps.requestLogs?.flush();
      const page = await listLogs(deps.db, auth.team.id, query);
      return toList(page, item);
    },
  }),
  defineOperation({
    ...base,
    operationId: 'getLog',
    method: 'get',
    path: '/logs/{id}',
    summary: 'Retrieve a request log',
    description: 'Retrieve one request log with its (redacted) request and response bodies.',
    params: idParams('request log'),
    response: log,
    handler: async ({ auth, params, deps }) => {
      await deps.requestLogs?.flush();
      const row = await getLog(deps.db, auth.team.id, params.id);
      return { object: 'log' as const, ...item(row), request_body: row.request_body, response_body: row.response_body };
    },
  }),
];
