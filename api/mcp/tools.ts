// The MCP server's tools, generated from the operation declarations (docs/mcp.md): every built operation an OAuth
// scope reaches is a tool named by its operationId, described by its summary and description, its input the
// operation's own path, query and body schemas (as JSON Schema, as in the OpenAPI document), and called by running
// the operation's own handler with the token's team and scopes. A new route is a new tool with no code here.
import { z } from 'zod';
import type { Context } from 'koa';
import { keyPermissions, type Auth, type Operation } from '../routes/operation.ts';
import type { ApiDeps } from '../deps.ts';
import { ServiceError, internalError } from '../../shared/errors.ts';
import { checkPermission } from '../middleware/auth.ts';
import { rateLimit } from '../middleware/rate-limit.ts';
import { parseBody, parseParams, parseQuery } from '../middleware/validate.ts';

export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean };
  op: Operation;
}

/** What a tool can stand for: a built operation an API key permission and an OAuth scope reach, JSON in and out. */
export function toolOperations(ops: Operation[]): Operation[] {
  return ops.filter(
    (op) =>
      op.scope !== null && keyPermissions.includes(op.permission) && !op.notImplemented && !op.raw && !op.bodyMedia,
  );
}

function inputOf(op: Operation): z.ZodObject {
  return z.object({
    ...(op.params ? { path: op.params } : {}),
    ...(op.query ? { query: op.query } : {}),
    ...(op.body ? { body: op.bodyDoc ?? op.body } : {}),
  });
}

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' });
  delete (json as Record<string, unknown>).$schema;
  return json as Record<string, unknown>;
}

export function buildTools(ops: Operation[]): McpTool[] {
  return toolOperations(ops).map((op) => ({
    name: op.operationId,
    title: op.summary,
    description: `${op.description}\n\nNeeds the OAuth scope \`${op.scope}\`. (${op.method.toUpperCase()} ${op.path})`,
    inputSchema: { type: 'object', ...jsonSchema(inputOf(op)) },
    annotations: {
      readOnlyHint: op.method === 'get',
      destructiveHint: op.method === 'delete',
      idempotentHint: op.method === 'get' || op.method === 'put' || op.method === 'delete',
    },
    op,
  }));
}

export interface ToolAnswer {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

function answer(value: Record<string, unknown>, isError = false): ToolAnswer {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value, isError };
}

/** The path parameters given; one missing is the caller's mistake to name (over HTTP it would be another route). */
function pathOf(op: Operation, given: unknown): unknown {
  const names = [...op.path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]);
  const path = (given ?? {}) as Record<string, unknown>;
  const missing = names.filter((n) => typeof path[n] !== 'string');
  if (missing.length)
    throw new ServiceError('validation_error', `Missing path parameter(s): ${missing.join(', ')}.`, {
      errors: missing.map((n) => ({ path: `path.${n}`, message: 'Required string' })),
    });
  return path;
}

/** Runs the tool's operation as the router would: permission and scope, rate limit, its schemas, its handler. */
export async function callTool(
  tool: McpTool,
  args: unknown,
  ctx: Context,
  deps: ApiDeps,
  auth: Auth,
): Promise<ToolAnswer> {
  const op = tool.op;
  try {
    checkPermission(op, auth);
    await rateLimit(ctx, deps, auth);
    const input = (args ?? {}) as Record<string, unknown>;
    const params = op.params ? parseParams(op.params, pathOf(op, input.path)) : undefined;
    const query = op.query ? parseQuery(op.query, input.query ?? {}) : undefined;
    const body = op.body ? parseBody(op.body, input.body ?? {}) : undefined;
    ctx.state.statusOverride = undefined;
    const result = await op.handler({
      params,
      query,
      body,
      auth,
      session: undefined,
      deps,
      ctx,
      reservation: null,
    } as never);
    const value = result && typeof result === 'object' && !Array.isArray(result) ? result : { result };
    return answer(value as Record<string, unknown>);
  } catch (err) {
    const error = err instanceof ServiceError ? err : internalError();
    if (!(err instanceof ServiceError)) deps.log.error({ err, tool: tool.name }, 'mcp.tool_failed');
    return answer(error.toBody() as unknown as Record<string, unknown>, true);
  }
}
