// A contact's global `unsubscribed` as the person sets it, through the preference page or a List-Unsubscribe link of
// mail without a topic. Unsubscribing an address that is no contact of the team makes one (`contact.created`, with
// `unsubscribed: true`): the choice needs a row to live in, and the API must show the customer the same contact the
// person unsubscribed. No allowance applies here: recording an unsubscribe is never refused. Subscribing again
// makes no contact: an address that is none is not unsubscribed.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { contactAddress } from './address.ts';
import { recordContactEvent } from './events.ts';
import type { ContactRow } from './rows.ts';

/** The address as a contact stores it (the send path's addresses parse the same way, so this never falls back). */
function stored(address: string): string {
  const parsed = contactAddress(address);
  return 'address' in parsed ? parsed.address : address.trim();
}

/**
 * Sets the contact's `unsubscribed` for `address` (any case) in the caller's transaction, recording `contact.created`
 * or `contact.updated` when something changed. Answers the contact as changed, or null when nothing changed.
 */
export async function setUnsubscribed(
  trx: Knex,
  teamId: string,
  address: string,
  unsubscribed: boolean,
): Promise<ContactRow | null> {
  if (!unsubscribed) {
    const [row] = await trx<ContactRow>('contacts')
      .where({ team_id: teamId, unsubscribed: true })
      .whereRaw('lower(email) = lower(?)', [address])
      .update({ unsubscribed: false, updated_at: trx.fn.now() as never })
      .returning('*');
    if (row) await recordContactEvent(trx, row, 'updated');
    return row ?? null;
  }
  // One statement, so two unsubscribes at once make one contact; `xmax = 0` marks the row this statement inserted.
  const {
    rows: [row],
  } = await trx.raw(
    `insert into contacts (id, team_id, email, unsubscribed) values (?, ?, ?, true)
    on conflict (team_id, lower(email)) do update set unsubscribed = true, updated_at = now()
    where not contacts.unsubscribed
    returning *, (xmax = 0) as inserted`,
    [newId(), teamId, stored(address)],
  );
  if (!row) return null;
  const { inserted, ...contact } = row as ContactRow & { inserted: boolean };
  await recordContactEvent(trx, contact, inserted ? 'created' : 'updated', inserted ? [] : undefined);
  return contact;
}
