// MCP calls in the team's request logs (GET /logs): each tool call and resource read is one row, written through
// the request-log writer as a REST request is (api/router.ts), its endpoint `/mcp/tools/<tool>` (or
// `/mcp/resources/<resource>`), its key the token's OAuth grant, its status the HTTP status the same operation would
// have answered (a tool's error answer carries it; a protocol error is 400, an unexpected one 500), its duration
// the call's own. The HTTP request to /mcp itself is not logged again.
import type { Context } from 'koa';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ApiDeps } from '../deps.ts';
import type { Auth } from '../routes/operation.ts';
import { newId } from '../../shared/ids.ts';

/** The status a call answered: a tool's error body says it (ServiceError.toBody's statusCode). */
function statusOf(result: unknown): number {
  const r = result as { isError?: boolean; structuredContent?: { statusCode?: unknown } };
  if (!r?.isError) return 200;
  const code = r.structuredContent?.statusCode;
  return typeof code === 'number' ? code : 400;
}

export async function logCall<T>(
  deps: ApiDeps,
  ctx: Context,
  auth: Auth,
  endpoint: string,
  input: unknown,
  call: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  let status = 500;
  let answer: unknown = null;
  try {
    const result = await call();
    status = statusOf(result);
    const r = result as { structuredContent?: unknown; contents?: unknown[] };
    // A story is a document, not data: its size is what the log keeps of it.
    answer = r.structuredContent ?? (r.contents ? { contents: r.contents.length } : null);
    return result;
  } catch (err) {
    status = err instanceof McpError ? (err.code === -32002 ? 404 : 400) : 500;
    answer = { error: err instanceof McpError ? err.message : 'internal error' };
    throw err;
  } finally {
    await deps.requestLogs?.record({
      id: newId(),
      team_id: auth.team.id,
      api_key_id: null,
      oauth_grant_id: auth.oauth?.grantId ?? null,
      method: 'POST',
      endpoint,
      response_status: status,
      user_agent: ctx.get('user-agent') || null,
      duration_ms: Math.round(performance.now() - started),
      request_body: input ?? null,
      response_body: answer,
    });
  }
}
