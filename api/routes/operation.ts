// A route is a declaration: method, path, schemas, permission and scope. api/router.ts enforces them before
// the handler runs, and api/openapi.ts documents the same list, so the two cannot drift.
import type { z } from 'zod';
import type { Context } from 'koa';
import type { ApiDeps } from '../deps.ts';
import type { ApiKeyRow } from '../../shared/api-keys/keys.ts';
import type { TeamRow } from '../../shared/teams/teams.ts';
import type { Reservation } from '../../shared/idempotency/store.ts';
import type { ActiveSession, Role } from '../../shared/accounts/sessions.ts';
import type { OAuthCaller } from '../oauth/tokens.ts';

/** The least credential that reaches an operation (spec, Authentication 2). */
export type Permission = 'none' | 'session' | 'full_access' | 'sending_access' | 'store_access' | null;

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * Who calls an API route: an API key of the team, or (key null) a dashboard session acting on its current team
 * with its member's role (docs/accounts.md), or (key null) an OAuth access token with its scopes (docs/oauth.md).
 */
export interface Auth {
  key: ApiKeyRow | null;
  team: TeamRow;
  session?: ActiveSession;
  oauth?: OAuthCaller;
}

export interface HandlerInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** Present on every route whose permission is an API key permission. */
  auth: Auth;
  /** Present on `session` operations (and as auth.session on API routes a session reached). */
  session: ActiveSession & { token: string };
  deps: ApiDeps;
  ctx: Context;
  /** The request's Idempotency-Key reservation, on an `idempotent` operation given the header; else null. */
  reservation: Reservation | null;
}

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;
type In<S> = S extends z.ZodType ? z.input<S> : never;

export interface Operation<
  P extends z.ZodType | undefined = z.ZodType | undefined,
  Q extends z.ZodType | undefined = z.ZodType | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
  R extends z.ZodType = z.ZodType,
> {
  operationId: string;
  method: Method;
  /** OpenAPI style, `/api-keys/{id}`; served at `/` and again under `/api/v1`. */
  path: string;
  tag: string;
  /** A title for the reference's operation list: `Send an email`. */
  summary: string;
  /** What the operation does and answers, for a person reading the reference (CommonMark). */
  description: string;
  permission: Permission;
  scope: string | null;
  /**
   * With `scope: null`: why no OAuth access token reaches the operation, said in the 403 a token gets (by default:
   * it needs a full_access API key). API key creation says that a key would outlive the grant (docs/oauth.md).
   */
  tokenRefusal?: string;
  /**
   * The least member role a session needs on this API route (a `full_access` or `sending_access` one); default
   * `viewer` for GET, `member` for the rest (sessionRole). Admin-only areas (API keys, billing) say `admin`.
   */
  role?: Role;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * The body as the reference documents it, when the parser is laxer on purpose: the batch send takes any objects
   * and checks each item itself, so that a permissive batch can send the valid ones.
   */
  bodyDoc?: z.ZodType;
  /**
   * The media type of the documented body when it is not JSON: `multipart/form-data` for an upload, which the
   * handler reads itself as a stream (no `body` schema, so the router reads nothing).
   */
  bodyMedia?: 'multipart/form-data';
  /** Request headers the handler reads itself (the router does not parse them): documented only. */
  headers?: z.ZodObject;
  /** Request body examples for the reference, by name; each must parse as the documented body. */
  examples?: Record<string, { summary: string; value: unknown }>;
  response: R;
  /** 201 for creates, 200 otherwise (CONTRACT). */
  status?: 200 | 201;
  /** Other statuses that answer with the same response schema (a degraded /ready answers 503). */
  alsoAnswers?: number[];
  /**
   * Accepts the Idempotency-Key header. `answered-in-commit`: the handler stores its success answer with its work
   * (the reservation is in its input); `true`: the middleware stores it after the handler.
   */
  idempotent?: true | 'answered-in-commit';
  bodyLimit?: number;
  /** Areas not built yet answer 501 not_implemented after the usual auth checks. */
  notImplemented?: boolean;
  /** Raw handlers (downloads) set ctx.body themselves and return undefined. */
  raw?: boolean;
  /**
   * A `null` operation that takes only an OAuth access token bound to it and checks that token itself (/mcp:
   * api/mcp/endpoint.ts answers the MCP authorization spec's 401). The router runs it with no caller of its own; a
   * `null` operation without this is refused to every credential.
   */
  oauthOnly?: true;
  handler: (input: HandlerInput<Out<P>, Out<Q>, Out<B>>) => Promise<In<R> | z.output<R>>;
}

/** Keeps each declaration's handler typed against its own schemas. */
export function defineOperation<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  R extends z.ZodType = z.ZodType,
>(op: Operation<P, Q, B, R>): Operation {
  return op as unknown as Operation;
}

export const keyPermissions: Permission[] = ['full_access', 'sending_access', 'store_access'];

export function needsApiKey(op: Pick<Operation, 'permission'>): boolean {
  return keyPermissions.includes(op.permission);
}

/** The least role a session needs on an API route (Operation.role). */
export function sessionRole(op: Pick<Operation, 'role' | 'method'>): Role {
  return op.role ?? (op.method === 'get' ? 'viewer' : 'member');
}
