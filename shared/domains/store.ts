// Data access of the domains area. Functions take `db` (knex or a transaction) first.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { notFound, ServiceError } from '../errors.ts';
import { paginate, type ListQuery } from '../pagination.ts';
import type { DesiredRecord, DomainSettings, PublishedKey } from './records.ts';
import type { DomainStatus, RecordStatus } from './status.ts';
import type { Region } from '../teams/teams.ts';

export interface DomainRow extends DomainSettings {
  id: string;
  team_id: string;
  name: string;
  status: DomainStatus;
  region: Region;
  managed: boolean;
  created_at: Date;
  updated_at: Date;
  checking_since: Date | null;
  last_checked_at: Date | null;
  next_check_at: Date | null;
  check_count: number;
  verified_at: Date | null;
}

export interface RecordRow extends DesiredRecord {
  id: string;
  domain_id: string;
  team_id: string;
  position: number;
  status: RecordStatus;
  found: string | null;
  priority?: number;
  last_checked_at: Date | null;
}

export interface DkimKeyRow extends PublishedKey {
  id: string;
  domain_id: string;
  team_id: string;
  private_key_sealed: string;
  status: 'pending' | 'active' | 'retiring' | 'retired';
  created_at: Date;
  activated_at: Date | null;
  retire_after: Date | null;
}

export async function findDomain(db: Knex, teamId: string, id: string): Promise<DomainRow> {
  const row = await db<DomainRow>('domains').where({ id, team_id: teamId }).first();
  if (!row) throw notFound('Domain');
  return row;
}

/**
 * The domain and its records as of one moment (a read-only REPEATABLE READ snapshot). Read one after the other, a
 * check the worker commits between the two reads pairs the domain's old status with its new records: a CI run's
 * domain page showed every record verified under a `pending` domain and, no record being pending, stopped polling.
 */
export function findDomainWithRecords(
  db: Knex,
  teamId: string,
  id: string,
): Promise<{ row: DomainRow; records: RecordRow[] }> {
  return db.transaction(
    async (trx) => {
      const row = await findDomain(trx, teamId, id);
      return { row, records: await recordsOf(trx, row.id) };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}

export function listDomains(db: Knex, teamId: string, page: ListQuery) {
  return paginate<DomainRow>(db('domains').where({ team_id: teamId }), page);
}

export function recordsOf(db: Knex, domainId: string): Promise<RecordRow[]> {
  return db<RecordRow>('domain_records').where({ domain_id: domainId }).orderBy('position');
}

/** Keys whose records are published: every key not yet retired. */
export function publishedKeys(db: Knex, domainId: string): Promise<DkimKeyRow[]> {
  return db<DkimKeyRow>('dkim_keys')
    .where({ domain_id: domainId })
    .whereNot({ status: 'retired' })
    .orderBy('created_at');
}

/** The editable guard every write passes through: the managed domain accepts none. */
export function assertWritable(domain: DomainRow): void {
  if (domain.managed) {
    throw new ServiceError('validation_error', 'The managed domain is set up by the platform and cannot be changed.', {
      status: 422,
    });
  }
}

/**
 * Makes the stored records equal `desired`, keeping the status of every record that did not change, so a
 * settings change re-checks only what is new. Answers whether anything changed.
 */
export async function syncRecords(
  db: Knex,
  domain: Pick<DomainRow, 'id' | 'team_id'>,
  desired: DesiredRecord[],
): Promise<boolean> {
  const current = await recordsOf(db, domain.id);
  const key = (r: DesiredRecord) => `${r.record}|${r.name}|${r.type}|${r.value}`;
  const wanted = new Map(desired.map((r, i) => [key(r), { r, i }]));
  const have = new Map(current.map((r) => [key(r), r]));
  const stale = current.filter((r) => !wanted.has(key(r))).map((r) => r.id);
  if (stale.length) await db('domain_records').whereIn('id', stale).delete();
  let changed = stale.length > 0;
  for (const [k, { r, i }] of wanted) {
    const existing = have.get(k);
    if (existing) {
      if (existing.position !== i) await db('domain_records').where({ id: existing.id }).update({ position: i });
      continue;
    }
    changed = true;
    await db('domain_records').insert({
      id: newId(),
      team_id: domain.team_id,
      domain_id: domain.id,
      position: i,
      record: r.record,
      name: r.name,
      type: r.type,
      value: r.value,
      priority: r.priority ?? null,
      status: 'not_started',
    });
  }
  return changed;
}
