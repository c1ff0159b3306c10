// A team's deletion. An admin asks for it by typing the team's name (`confirm`); the team is `scheduled` at once:
// its sends are refused (API, batch, SMTP: shared/emails/accept.ts), its scheduled emails are not released, the
// mta leases none of its queued mail (mta/delivery/lease.ts, sweep.ts: it waits), its received mail is dropped as
// `team_blocked`. Inside the 30-day grace window an admin may cancel it. The nightly
// retention job (worker/retention.ts) moves a team whose window has passed to `in_progress` and erases it: every row
// of every table with a team_id (shared/teams/tables.ts), the blobs those rows point at, the team's Redis keys, and
// the team row itself; users stay (they may belong to other teams), their memberships go.
import type { Knex } from 'knex';
import type { BlobStore } from '../blobs.ts';
import type { Logger } from '../logger.ts';
import { redisKey, type Redis } from '../redis.ts';
import { ServiceError } from '../errors.ts';
import { iso } from '../time.ts';
import { blobColumns, teamTables } from './tables.ts';
import type { TeamRow } from './teams.ts';

export const GRACE_DAYS = 30;

export function presentDeletion(t: TeamRow) {
  return {
    object: 'team_deletion' as const,
    team_id: t.id,
    status: t.deletion_status ?? 'none',
    requested_at: iso(t.deletion_requested_at),
    purge_after: iso(t.deletion_purge_after),
    requested_by: t.deletion_requested_by ?? null,
  };
}

/** True while a deletion is asked for: the team neither sends nor receives. */
export function deletionPending(t: Pick<TeamRow, 'deletion_status'>): boolean {
  return Boolean(t.deletion_status && t.deletion_status !== 'none');
}

export async function scheduleDeletion(
  db: Knex,
  team: TeamRow,
  userId: string,
  confirm: string,
  now = new Date(),
): Promise<TeamRow> {
  if (confirm !== team.name)
    throw new ServiceError('validation_error', "Invalid `confirm`: type the team's name exactly to delete it.", {
      errors: [{ path: 'confirm', message: "must equal the team's name" }],
    });
  if (team.platform) throw new ServiceError('validation_error', 'The platform team cannot be deleted.');
  const [row] = await db<TeamRow>('teams')
    .where({ id: team.id, deletion_status: 'none' })
    .update({
      deletion_status: 'scheduled',
      deletion_requested_at: now,
      deletion_purge_after: new Date(now.getTime() + GRACE_DAYS * 86_400_000),
      deletion_requested_by: userId,
      updated_at: now,
    })
    .returning('*');
  // Asked twice: the first request stands.
  return row ?? (await db<TeamRow>('teams').where({ id: team.id }).first())!;
}

export async function cancelDeletion(db: Knex, team: TeamRow, now = new Date()): Promise<TeamRow> {
  const [row] = await db<TeamRow>('teams')
    .where({ id: team.id, deletion_status: 'scheduled' })
    .update({
      deletion_status: 'none',
      deletion_requested_at: null,
      deletion_purge_after: null,
      deletion_requested_by: null,
      updated_at: now,
    })
    .returning('*');
  if (row) return row;
  const message =
    team.deletion_status === 'in_progress'
      ? 'The deletion is in progress and cannot be canceled.'
      : 'No deletion is scheduled for this team.';
  throw new ServiceError('validation_error', message);
}

export interface PurgeDeps {
  db: Knex;
  blobs: BlobStore;
  redis: Redis;
  config: { REDIS_PREFIX: string };
  log: Logger;
}

/** Every Redis key of the platform's prefix that names the team (its rate-limit windows, ...). */
async function purgeRedis(deps: PurgeDeps, teamId: string): Promise<number> {
  let cursor = '0';
  let removed = 0;
  do {
    const [next, keys] = await deps.redis.scan(cursor, 'MATCH', redisKey(deps.config, `*${teamId}*`), 'COUNT', 1000);
    if (keys.length) removed += await deps.redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  return removed;
}

/** Erases the team: its rows (children first), then the blobs no row points at any more, then its Redis keys. */
export async function purgeTeam(deps: PurgeDeps, teamId: string): Promise<{ rows: number; blobs: number }> {
  const tables = await teamTables(deps.db);
  const blobs = new Map<string, { table: string; column: string }>();
  let rows = 0;
  await deps.db.transaction(async (trx) => {
    // The OAuth server's codes and tokens of the team's grants: oidc-provider's store (oauth_models) has no team_id;
    // its rows name their grant, and the grants (oauth_grants) are the team's.
    rows += await trx('oauth_models')
      .whereIn('grant_id', trx('oauth_grants').where({ team_id: teamId }).select('provider_grant_id'))
      .delete();
    for (const table of tables) {
      for (const column of await blobColumns(trx, table)) {
        const keys: string[] = await trx(table).where({ team_id: teamId }).whereNotNull(column).pluck(column);
        for (const key of keys) blobs.set(key, { table, column });
      }
      rows += await trx(table).where({ team_id: teamId }).delete();
    }
    rows += await trx('teams').where({ id: teamId }).delete();
  });
  let removed = 0;
  for (const [key, { table, column }] of blobs) {
    // A blob another row still names (one stored message for recipients of several teams) stays.
    if (await deps.db(table).where(column, key).first()) continue;
    await deps.blobs.delete(key);
    removed++;
  }
  const redisKeys = await purgeRedis(deps, teamId).catch((err: Error) => {
    deps.log.warn({ err: err.message, teamId }, 'team_deletion.redis_failed');
    return 0;
  });
  deps.log.info({ teamId, rows, blobs: removed, redisKeys }, 'team_deletion.purged');
  return { rows, blobs: removed };
}

/** The retention job's part: teams whose 30 days have passed are moved to in_progress and erased, one by one. */
export async function purgeDueDeletions(deps: PurgeDeps, now = new Date()): Promise<string[]> {
  const due: string[] = await deps
    .db('teams')
    .whereIn('deletion_status', ['scheduled', 'in_progress'])
    .where('deletion_purge_after', '<=', now)
    .pluck('id');
  const purged: string[] = [];
  for (const id of due) {
    // in_progress first (committed): from here it cannot be canceled, and a crash resumes it on the next run.
    await deps.db('teams').where({ id }).update({ deletion_status: 'in_progress' });
    await purgeTeam(deps, id);
    purged.push(id);
  }
  return purged;
}
