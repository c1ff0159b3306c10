// The `data` of `contact.created`, `contact.updated` and `contact.deleted` (../shared/reference/resend-api.md §4),
// recorded in the transaction of the change. Documented in the OpenAPI document (api/routes/contact-events.ts).
import type { Knex } from 'knex';
import { recordEvent } from '../events.ts';
import { isoRequired } from '../time.ts';
import type { ContactRow } from './rows.ts';

export type ContactEventData = {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  unsubscribed: boolean;
  segment_ids: string[];
  created_at: string;
  updated_at: string;
};

export function contactEventData(row: ContactRow, segmentIds: string[]): ContactEventData {
  return {
    id: row.id,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    unsubscribed: row.unsubscribed,
    segment_ids: segmentIds,
    created_at: isoRequired(row.created_at),
    updated_at: isoRequired(row.updated_at),
  };
}

/** The ids of the segments the contact is a member of, in id order. */
export async function segmentIdsOf(db: Knex, contactId: string): Promise<string[]> {
  const rows = await db('contact_segments').where({ contact_id: contactId }).orderBy('segment_id').select('segment_id');
  return rows.map((r) => r.segment_id);
}

/** Records `contact.<change>` for the contact as it now is (as it was, for a deletion: pass its segment ids). */
export async function recordContactEvent(
  db: Knex,
  row: ContactRow,
  change: 'created' | 'updated' | 'deleted',
  segmentIds?: string[],
): Promise<void> {
  const segments = segmentIds ?? (await segmentIdsOf(db, row.id));
  await recordEvent(db, row.team_id, `contact.${change}`, contactEventData(row, segments));
}
