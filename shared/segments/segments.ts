// Segments: named groups of a team's contacts, members added by hand (shared/contacts/memberships.ts); the SDK's
// older "audiences" are the same rows. Every function takes `db` first and the team. Deleting a segment deletes
// its memberships, never its contacts. Segments record no events of their own, and a segment's deletion records no
// `contact.updated` for its members (it may have a million).
import type { Knex } from 'knex';
import { newId, isUuid } from '../ids.ts';
import { paginate, type ListQuery } from '../pagination.ts';

export const NAME_MAX_LENGTH = 100;

export interface SegmentRow {
  id: string;
  team_id: string;
  name: string;
  created_at: Date;
  updated_at: Date;
}

export async function createSegment(db: Knex, teamId: string, input: { name: string }): Promise<SegmentRow> {
  const [row] = await db<SegmentRow>('segments')
    .insert({ id: newId(), team_id: teamId, name: input.name })
    .returning('*');
  return row;
}

/** The team's segment, or null (an unknown id, another team's, or not a UUID at all). */
export async function getSegment(db: Knex, teamId: string, id: string): Promise<SegmentRow | null> {
  if (!isUuid(id)) return null;
  return (await db<SegmentRow>('segments').where({ team_id: teamId, id }).first()) ?? null;
}

/** How many contacts the segment has. */
export async function countMembers(db: Knex, segmentId: string): Promise<number> {
  const [{ count }] = await db('contact_segments').where({ segment_id: segmentId }).count({ count: '*' });
  return Number(count);
}

/** A page of the team's segments, newest first. */
export function listSegments(db: Knex, teamId: string, page: ListQuery) {
  return paginate<SegmentRow>(db('segments').where({ team_id: teamId }), page);
}

export async function renameSegment(db: Knex, teamId: string, id: string, name: string): Promise<SegmentRow | null> {
  if (!isUuid(id)) return null;
  const [row] = await db<SegmentRow>('segments')
    .where({ team_id: teamId, id })
    .update({ name, updated_at: db.fn.now() as never })
    .returning('*');
  return row ?? null;
}

/** Deletes the segment and its memberships; the deleted row, or null. */
export async function deleteSegment(db: Knex, teamId: string, id: string): Promise<SegmentRow | null> {
  if (!isUuid(id)) return null;
  const [row] = await db<SegmentRow>('segments').where({ team_id: teamId, id }).delete().returning('*');
  return row ?? null;
}
