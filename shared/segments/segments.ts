// Segments: named groups of a team's contacts, members added by hand (shared/contacts/memberships.ts), matched by
// a filter (filter-schema.ts), or both (membership.ts); the SDK's older "audiences" are the same rows. Every
// function takes `db` first and the team. Deleting a segment deletes its memberships, never its contacts. Segments
// record no events of their own, and a segment's deletion records no `contact.updated` for its members (it may
// have a million), nor does a contact's joining or leaving a segment by its filter.
import type { Knex } from 'knex';
import { newId, isUuid } from '../ids.ts';
import { paginate, type ListQuery } from '../pagination.ts';
import { checkFilterReferences } from './filter-check.ts';
import type { FilterNode } from './filter-schema.ts';

export const NAME_MAX_LENGTH = 100;

export interface SegmentRow {
  id: string;
  team_id: string;
  name: string;
  /** Null for a segment whose members are all added by hand. */
  filter: FilterNode | null;
  created_at: Date;
  updated_at: Date;
}

/** The filter as JSON text for its jsonb column; none is SQL null. */
const json = (filter: FilterNode | null | undefined) => (filter ? JSON.stringify(filter) : null);

/** Creates a segment, with its filter when given (checked against the team's properties and topics first). */
export async function createSegment(
  db: Knex,
  teamId: string,
  input: { name: string; filter?: FilterNode | null },
): Promise<SegmentRow> {
  return db.transaction(async (trx) => {
    if (input.filter) await checkFilterReferences(trx, teamId, input.filter);
    const [row] = await trx<SegmentRow>('segments')
      .insert({ id: newId(), team_id: teamId, name: input.name, filter: json(input.filter) as never })
      .returning('*');
    return row;
  });
}

/** The team's segment, or null (an unknown id, another team's, or not a UUID at all). */
export async function getSegment(db: Knex, teamId: string, id: string): Promise<SegmentRow | null> {
  if (!isUuid(id)) return null;
  return (await db<SegmentRow>('segments').where({ team_id: teamId, id }).first()) ?? null;
}

/** A page of the team's segments, newest first. */
export function listSegments(db: Knex, teamId: string, page: ListQuery) {
  return paginate<SegmentRow>(db('segments').where({ team_id: teamId }), page);
}

/** Renames the segment and/or replaces its filter (null: none any more); absent fields stay. */
export async function updateSegment(
  db: Knex,
  teamId: string,
  id: string,
  change: { name?: string; filter?: FilterNode | null },
): Promise<SegmentRow | null> {
  if (!isUuid(id)) return null;
  return db.transaction(async (trx) => {
    if (change.filter) await checkFilterReferences(trx, teamId, change.filter);
    const [row] = await trx<SegmentRow>('segments')
      .where({ team_id: teamId, id })
      .update({
        ...(change.name === undefined ? {} : { name: change.name }),
        ...(change.filter === undefined ? {} : { filter: json(change.filter) as never }),
        updated_at: trx.fn.now() as never,
      })
      .returning('*');
    return row ?? null;
  });
}

/** Deletes the segment and its memberships; the deleted row, or null. */
export async function deleteSegment(db: Knex, teamId: string, id: string): Promise<SegmentRow | null> {
  if (!isUuid(id)) return null;
  const [row] = await db<SegmentRow>('segments').where({ team_id: teamId, id }).delete().returning('*');
  return row ?? null;
}
