// Teams: the tenant every row belongs to. Data access takes `db` (knex or a transaction) first.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { randomBase62 } from '../tokens.ts';
import { notFound, ServiceError } from '../errors.ts';

export const regions = ['us-east-1', 'eu-west-1', 'sa-east-1', 'ap-northeast-1'] as const;
export type Region = (typeof regions)[number];

export interface TeamRow {
  id: string;
  name: string;
  slug: string;
  status: 'active' | 'suspended';
  plan: string;
  rate_limit_rps: number | null;
  sandbox_regions: string[];
  /** Send limits set by the operator (null = none). */
  daily_send_limit: number | null;
  monthly_send_limit: number | null;
  /** Billable contacts the team may have; 0 = unlimited (shared/contacts/allowance.ts). */
  contacts_included: number;
  suspended_at: Date | null;
  created_at: Date;
  updated_at: Date;
  /** The platform's own team (sender of the account mails, shared/accounts/platform-sender.ts). */
  platform?: boolean;
  /** A deletion asked for (shared/teams/deletion.ts): `scheduled` stops sending and receiving at once. */
  deletion_status?: 'none' | 'scheduled' | 'in_progress';
  deletion_requested_at?: Date | null;
  deletion_purge_after?: Date | null;
  deletion_requested_by?: string | null;
  ai_assist?: boolean;
}

function slugify(name: string): string {
  const base = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return `${base || 'team'}-${randomBase62(4).toLowerCase()}`;
}

export async function createTeam(db: Knex, input: { name: string }): Promise<TeamRow> {
  const [row] = await db<TeamRow>('teams')
    .insert({ id: newId(), name: input.name, slug: slugify(input.name) })
    .returning('*');
  return row;
}

export async function findTeam(db: Knex, id: string): Promise<TeamRow | undefined> {
  return db<TeamRow>('teams').where({ id }).first();
}

export async function getTeam(db: Knex, id: string): Promise<TeamRow> {
  const row = await findTeam(db, id);
  if (!row) throw notFound('Team');
  return row;
}

async function updateTeam(db: Knex, id: string, patch: Partial<TeamRow>): Promise<TeamRow> {
  const [row] = await db<TeamRow>('teams')
    .where({ id })
    .update({ ...patch, updated_at: db.fn.now() as unknown as Date })
    .returning('*');
  if (!row) throw notFound('Team');
  return row;
}

export function setRateLimit(db: Knex, id: string, rps: number | null): Promise<TeamRow> {
  if (rps !== null && (!Number.isInteger(rps) || rps < 1 || rps > 100000)) {
    throw new ServiceError(
      'validation_error',
      'The rate limit must be a whole number of requests a second from 1 to 100000.',
    );
  }
  return updateTeam(db, id, { rate_limit_rps: rps });
}

/** Daily and monthly send limits (null = none); undefined leaves one as it is. */
export async function setSendLimits(db: Knex, id: string, limits: { daily?: number | null; monthly?: number | null }) {
  const patch: Record<string, number | null> = {};
  if (limits.daily !== undefined) patch.daily_send_limit = limits.daily;
  if (limits.monthly !== undefined) patch.monthly_send_limit = limits.monthly;
  const [row] = await db('teams')
    .where({ id })
    .update({ ...patch, updated_at: db.fn.now() })
    .returning(['id', 'daily_send_limit', 'monthly_send_limit']);
  if (!row) throw notFound('Team');
  return row as { id: string; daily_send_limit: number | null; monthly_send_limit: number | null };
}

/** Receiving limits (null = none); undefined leaves one as it is. The receive job enforces them
 * (inbound/receive/limits.ts): kept messages per UTC day, bytes of kept messages. */
export async function setReceiveLimits(
  db: Knex,
  id: string,
  limits: { dailyCap?: number | null; storageBytes?: number | null },
) {
  const patch: Record<string, number | null> = {};
  if (limits.dailyCap !== undefined) patch.receive_daily_cap = limits.dailyCap;
  if (limits.storageBytes !== undefined) patch.receive_storage_bytes = limits.storageBytes;
  const [row] = await db('teams')
    .where({ id })
    .update({ ...patch, updated_at: db.fn.now() })
    .returning(['id', 'receive_daily_cap', 'receive_storage_bytes']);
  if (!row) throw notFound('Team');
  return row as { id: string; receive_daily_cap: number | null; receive_storage_bytes: number | null };
}

/** The team's data retention window (days): how long a dropped received record is kept (worker maintenance). */
export async function setRetention(db: Knex, id: string, days: number) {
  const [row] = await db('teams')
    .where({ id })
    .update({ data_retention_days: days, updated_at: db.fn.now() })
    .returning(['id', 'data_retention_days']);
  if (!row) throw notFound('Team');
  return row as { id: string; data_retention_days: number };
}

/** The team's contact allowance: billable contacts it may have, 0 for unlimited. */
export async function setContactsIncluded(db: Knex, id: string, included: number) {
  if (!Number.isSafeInteger(included) || included < 0 || included > 2_147_483_647)
    throw new ServiceError('validation_error', 'contacts_included is a whole number of contacts (0 for unlimited).');
  const [row] = await db('teams')
    .where({ id })
    .update({ contacts_included: included, updated_at: db.fn.now() })
    .returning(['id', 'contacts_included']);
  if (!row) throw notFound('Team');
  return row as { id: string; contacts_included: number };
}

export function suspendTeam(db: Knex, id: string): Promise<TeamRow> {
  return updateTeam(db, id, { status: 'suspended', suspended_at: new Date() });
}

export function unsuspendTeam(db: Knex, id: string): Promise<TeamRow> {
  return updateTeam(db, id, { status: 'active', suspended_at: null });
}

/** Takes `region` out of the sending sandbox. */
export async function liftSandbox(db: Knex, id: string, region: string): Promise<TeamRow> {
  if (!(regions as readonly string[]).includes(region)) {
    throw new ServiceError('validation_error', `Unknown region \`${region}\`; expected one of ${regions.join(', ')}.`);
  }
  const team = await getTeam(db, id);
  return updateTeam(db, id, { sandbox_regions: team.sandbox_regions.filter((r) => r !== region) });
}

export async function countTeams(db: Knex): Promise<number> {
  const [{ count }] = await db('teams').count({ count: '*' });
  return Number(count);
}
