// API keys: `rk_` + 32 random bytes in base62. Only the sha256 of a token is stored; the token is returned once.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { randomBase62, sha256Hex } from '../tokens.ts';
import { notFound, ServiceError } from '../errors.ts';
import { paginate, type ListQuery } from '../pagination.ts';
import type { TeamRow } from '../teams/teams.ts';
import { reviveDates } from '../emails/sql.ts';
import { prepared } from '../db/prepared.ts';

export const permissions = ['full_access', 'sending_access', 'store_access'] as const;
export type KeyPermission = (typeof permissions)[number];

export interface ApiKeyRow {
  id: string;
  team_id: string;
  name: string;
  permission: KeyPermission;
  domain_id: string | null;
  key_prefix: string;
  token_hash: string;
  status: 'active' | 'revoked';
  inbox_access: 'none' | 'create' | 'read' | 'write';
  inbox_channel_ids: string[] | null;
  created_at: Date;
  last_used_at: Date | null;
  last_used_request_log_id: string | null;
  revoked_at: Date | null;
}

export const TOKEN_PREFIX = 'rk_';

export function newToken(): string {
  return TOKEN_PREFIX + randomBase62(32);
}

export const inboxAccess = ['none', 'create', 'read', 'write'] as const;

export interface CreateKeyInput {
  name: string;
  permission?: KeyPermission;
  domain_id?: string | null;
  inbox_access?: (typeof inboxAccess)[number];
  /** The channels an inbox key reaches; null: every open, unrestricted channel. */
  inbox_channel_ids?: string[] | null;
}

/** Permissions and bindings that name areas not built yet: refused with the field named, never stored half-meant. */
export function refuseUnbuilt(input: CreateKeyInput): void {
  if (input.permission === 'store_access') {
    throw new ServiceError(
      'validation_error',
      'A `store_access` key is bound to one store, and stores are not built on this platform yet.',
      {
        errors: [{ path: 'permission', message: 'store_access needs a store; stores are not built yet' }],
      },
    );
  }
  if (input.inbox_channel_ids?.length) {
    throw new ServiceError(
      'validation_error',
      `Inbox channel \`${input.inbox_channel_ids[0]}\` not found: inboxes are not built on this platform yet.`,
      {
        errors: [{ path: 'inbox_channel_ids.0', message: 'not found' }],
      },
    );
  }
}

export async function createKey(
  db: Knex,
  teamId: string,
  input: CreateKeyInput,
): Promise<{ row: ApiKeyRow; token: string }> {
  const permission = input.permission ?? 'full_access';
  const domainId = input.domain_id ?? null;
  if (domainId && permission !== 'sending_access') {
    throw new ServiceError('validation_error', '`domain_id` can only be set on a `sending_access` key.', {
      errors: [{ path: 'domain_id', message: 'only allowed with permission sending_access' }],
    });
  }
  if (domainId) {
    const domain = await db('domains').where({ id: domainId, team_id: teamId }).first('id');
    if (!domain) throw notFound('Domain');
  }
  const token = newToken();
  const [row] = await db<ApiKeyRow>('api_keys')
    .insert({
      id: newId(),
      team_id: teamId,
      name: input.name,
      permission,
      domain_id: domainId,
      key_prefix: token.slice(0, 8),
      token_hash: sha256Hex(token),
      inbox_access: input.inbox_access ?? 'none',
      inbox_channel_ids: input.inbox_channel_ids ?? null,
    })
    .returning('*');
  return { row, token };
}

/** Keys with their latest use: the newest request log when one is kept, else what the key row remembers. */
function withLastUse(db: Knex) {
  return db('api_keys as k')
    .select(
      'k.*',
      db.raw('coalesce(l.created_at, k.last_used_at) as last_used_at'),
      db.raw('coalesce(l.id, k.last_used_request_log_id) as last_used_request_log_id'),
    )
    .joinRaw(
      'left join lateral (select id, created_at from request_logs r where r.api_key_id = k.id order by r.id desc limit 1) l on true',
    );
}

export async function getKey(db: Knex, teamId: string, id: string): Promise<ApiKeyRow> {
  const row = await withLastUse(db).where({ 'k.id': id, 'k.team_id': teamId }).first();
  if (!row) throw notFound('API key');
  return row;
}

export function listKeys(db: Knex, teamId: string, page: ListQuery) {
  return paginate<ApiKeyRow>(withLastUse(db).where({ 'k.team_id': teamId }), page, 'k.id');
}

export async function renameKey(db: Knex, teamId: string, id: string, name: string): Promise<ApiKeyRow> {
  const [row] = await db<ApiKeyRow>('api_keys').where({ id, team_id: teamId }).update({ name }).returning('*');
  if (!row) throw notFound('API key');
  return row;
}

/** Revoking is permanent and idempotent; the row stays so the key reads as `revoked`. */
export async function revokeKey(db: Knex, teamId: string, id: string): Promise<ApiKeyRow> {
  const row = await getKey(db, teamId, id);
  if (row.status === 'revoked') return row;
  const [updated] = await db<ApiKeyRow>('api_keys')
    .where({ id, team_id: teamId })
    .update({ status: 'revoked', revoked_at: new Date() })
    .returning('*');
  return updated;
}

/** The status shown to the customer: a live key of a suspended team reads `suspended`. */
export function keyStatus(key: ApiKeyRow, team: Pick<TeamRow, 'status'>): 'active' | 'revoked' | 'suspended' {
  if (key.status === 'revoked') return 'revoked';
  return team.status === 'suspended' ? 'suspended' : 'active';
}

export type Authentication =
  { ok: true; key: ApiKeyRow; team: TeamRow } | { ok: false; error: 'invalid_api_key' | 'suspended_api_key' };

const AUTH_SQL =
  'select row_to_json(k.*) as key, row_to_json(t.*) as team from api_keys k join teams t on t.id = k.team_id where k.token_hash = ? limit 1';
const KEY_DATES = ['created_at', 'last_used_at', 'revoked_at'] as const;

/** Looks a bearer token up by its hash (an index lookup: no comparison of secrets happens in our code). */
export async function authenticate(db: Knex, token: string): Promise<Authentication> {
  if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return { ok: false, error: 'invalid_api_key' };
  // A prepared statement: it runs on every authenticated request (building it with knex cost more than running it).
  const [row] = await prepared<{ key: ApiKeyRow; team: TeamRow }>(db, 'pw_authenticate', AUTH_SQL, [sha256Hex(token)]);
  if (!row || row.key.status !== 'active') return { ok: false, error: 'invalid_api_key' };
  if (row.team.status === 'suspended') return { ok: false, error: 'suspended_api_key' };
  return { ok: true, key: reviveDates(row.key, KEY_DATES), team: row.team };
}
