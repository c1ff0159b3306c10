// Segment memberships added by hand: a contact in a segment. Adding or removing one changes the contact's
// `segment_ids`, so it records `contact.updated` (and bumps the contact's updated_at) when something changed.
import type { Knex } from 'knex';
import { notFound } from '../errors.ts';
import { isUuid } from '../ids.ts';
import { paginate, type ListQuery } from '../pagination.ts';
import { findContact } from './contacts.ts';
import type { ContactRow } from './rows.ts';
import { recordContactEvent } from './events.ts';

export interface Membership {
  contact: ContactRow;
  segmentId: string;
  /** False when the contact already was (add) or was not (remove) a member. */
  changed: boolean;
}

/** The contact (locked) and the segment (locked against deletion), or 404 naming which is missing. */
async function lockBoth(trx: Knex, teamId: string, idOrEmail: string, segmentId: string) {
  const contact = await findContact(trx, teamId, idOrEmail, true);
  if (!contact) throw notFound('Contact');
  const segment = isUuid(segmentId)
    ? await trx('segments').where({ team_id: teamId, id: segmentId }).forKeyShare().first('id')
    : undefined;
  if (!segment) throw notFound('Segment');
  return contact;
}

async function touched(trx: Knex, contact: ContactRow): Promise<ContactRow> {
  const [row] = await trx<ContactRow>('contacts')
    .where({ id: contact.id })
    .update({ updated_at: trx.fn.now() as never })
    .returning('*');
  await recordContactEvent(trx, row, 'updated');
  return row;
}

export async function addToSegment(
  db: Knex,
  teamId: string,
  idOrEmail: string,
  segmentId: string,
): Promise<Membership> {
  return db.transaction(async (trx) => {
    const contact = await lockBoth(trx, teamId, idOrEmail, segmentId);
    const inserted = await trx('contact_segments')
      .insert({ segment_id: segmentId, contact_id: contact.id, team_id: teamId })
      .onConflict(['segment_id', 'contact_id'])
      .ignore()
      .returning('segment_id');
    if (inserted.length === 0) return { contact, segmentId, changed: false };
    return { contact: await touched(trx, contact), segmentId, changed: true };
  });
}

export async function removeFromSegment(
  db: Knex,
  teamId: string,
  idOrEmail: string,
  segmentId: string,
): Promise<Membership> {
  return db.transaction(async (trx) => {
    const contact = await lockBoth(trx, teamId, idOrEmail, segmentId);
    const removed = await trx('contact_segments').where({ segment_id: segmentId, contact_id: contact.id }).delete();
    if (removed === 0) return { contact, segmentId, changed: false };
    return { contact: await touched(trx, contact), segmentId, changed: true };
  });
}

export interface ContactSegmentRow {
  id: string;
  name: string;
  /** When the contact was added to the segment. */
  created_at: Date;
}

/** A page of the segments the contact is a member of, newest segment first. */
export function listContactSegments(db: Knex, contactId: string, page: ListQuery) {
  const query = db('contact_segments as m')
    .join('segments as s', 's.id', 'm.segment_id')
    .where('m.contact_id', contactId)
    .select('s.id', 's.name', 'm.created_at');
  return paginate<ContactSegmentRow>(query, page, 's.id');
}
