import { z } from 'zod';
import * as keys from '../../shared/api-keys/keys.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { iso, isoRequired } from '../../shared/time.ts';
import { defineOperation } from './operation.ts';
import { deleted, idParams, ref, timestamp } from './schemas.ts';

const keyParams = idParams('API key');
import type { TeamRow } from '../../shared/teams/teams.ts';

const apiKey = z
  .object({
    object: z.literal('api_key'),
    id: z.uuid(),
    name: z.string(),
    created_at: timestamp,
    last_used_at: timestamp.nullable(),
    permission: z.enum(keys.permissions),
    domain_id: z.uuid().nullable(),
    key_prefix: z.string(),
    status: z.enum(['active', 'revoked', 'suspended']),
    last_used_request_log_id: z.uuid().nullable(),
    inbox_access: z.enum(keys.inboxAccess),
    inbox_channel_ids: z.array(z.uuid()).nullable(),
  })
  .meta({ id: 'ApiKey' });

function present(row: keys.ApiKeyRow, team: Pick<TeamRow, 'status'>): z.input<typeof apiKey> {
  return {
    object: 'api_key',
    id: row.id,
    name: row.name,
    created_at: isoRequired(row.created_at),
    last_used_at: iso(row.last_used_at),
    permission: row.permission,
    domain_id: row.domain_id,
    key_prefix: row.key_prefix,
    status: keys.keyStatus(row, team),
    last_used_request_log_id: row.last_used_request_log_id,
    inbox_access: row.inbox_access,
    inbox_channel_ids: row.inbox_channel_ids,
  };
}

const tag = 'api-keys';
const base = { tag, permission: 'full_access', scope: null } as const;
/** Through a session, keys are an admin's to make, rename and revoke (viewers and members may list them). */
const write = { ...base, role: 'admin' } as const;

export const apiKeyOperations = [
  defineOperation({
    ...write,
    operationId: 'createApiKey',
    method: 'post',
    path: '/api-keys',
    summary: 'Create an API key',
    description:
      "Create an API key. The answer holds its token (`rk_...`), the only time it is shown: only its hash is stored. A `sending_access` key may be bound to one domain.\n\nNo OAuth access token reaches it (403 `invalid_permission`), whatever its scopes: a key would outlive the grant that made it and that grant's revocation, with a permission (`full_access`) wider than the grant's scopes. A `full_access` API key or an admin's dashboard session creates keys (docs/oauth.md).",
    // A credential minted by a token must not survive the token's grant: no scope reaches this (docs/oauth.md).
    scope: null,
    tokenRefusal:
      'An OAuth access token cannot create API keys: a key would outlive the grant and its revocation. Create keys with a full_access API key or on the dashboard.',
    status: 201,
    body: z.object({
      name: z.string().max(200).describe('A name to tell the key by, up to 200 characters'),
      permission: z
        .enum(keys.permissions)
        .default('full_access')
        .describe('`store_access` is refused until stores are built'),
      domain_id: z
        .uuid()
        .nullable()
        .optional()
        .describe('Only with sending_access: the one domain this key may send from.'),
      inbox_access: z
        .enum(keys.inboxAccess)
        .default('none')
        .describe(
          'What the key may do in the Inbox: `create` opens conversations only, `read`, `write` reads and replies',
        ),
      inbox_channel_ids: z
        .array(z.uuid())
        .nullable()
        .optional()
        .describe(
          'The channels the key reaches; null: every open, unrestricted channel. Inboxes are not built yet: a non-empty list is refused',
        ),
    }),
    response: z.object({ id: z.uuid(), token: z.string() }).meta({ id: 'ApiKeyCreated' }),
    handler: async ({ auth, body, deps }) => {
      keys.refuseUnbuilt(body);
      const { row, token } = await keys.createKey(deps.db, auth.team.id, body);
      return { id: row.id, token };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'listApiKeys',
    method: 'get',
    path: '/api-keys',
    summary: 'List API keys',
    description: "List the team's API keys, newest first.",
    scope: 'api-keys:read',
    query: listQuery,
    response: listEnvelope(apiKey),
    handler: async ({ auth, query, deps }) => {
      await deps.requestLogs?.flush();
      const page = await keys.listKeys(deps.db, auth.team.id, query);
      return toList(page, (r) => present(r, auth.team));
    },
  }),
  defineOperation({
    ...base,
    operationId: 'getApiKey',
    method: 'get',
    path: '/api-keys/{id}',
    summary: 'Retrieve an API key',
    description: 'Retrieve an API key (never its token).',
    scope: 'api-keys:read',
    params: keyParams,
    response: apiKey,
    handler: async ({ auth, params, deps }) => {
      await deps.requestLogs?.flush();
      return present(await keys.getKey(deps.db, auth.team.id, params.id), auth.team);
    },
  }),
  defineOperation({
    ...write,
    operationId: 'updateApiKey',
    method: 'patch',
    path: '/api-keys/{id}',
    summary: 'Rename an API key',
    description: "Change an API key's name; its permission and token stay as they are.",
    scope: 'api-keys:write',
    params: keyParams,
    body: z.object({ name: z.string().max(200).describe('The new name, up to 200 characters') }),
    response: ref('api_key'),
    handler: async ({ auth, params, body, deps }) => {
      const row = await keys.renameKey(deps.db, auth.team.id, params.id, body.name);
      return { object: 'api_key' as const, id: row.id };
    },
  }),
  defineOperation({
    ...write,
    operationId: 'deleteApiKey',
    method: 'delete',
    path: '/api-keys/{id}',
    summary: 'Revoke an API key',
    description: 'Revoke an API key; it stops working at once and is listed as revoked.',
    scope: 'api-keys:write',
    params: keyParams,
    response: deleted('api_key'),
    handler: async ({ auth, params, deps }) => {
      const row = await keys.revokeKey(deps.db, auth.team.id, params.id);
      return { object: 'api_key' as const, id: row.id, deleted: true as const };
    },
  }),
];
