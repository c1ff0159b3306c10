// Contacts: a team's audience, one per address (shared/contacts/address.ts). Every function takes `db` first and
// the team; a contact of another team is as absent as one that never existed. Each change records its
// `contact.*` event in its own transaction, and only when something changed. A contact's topic choices are the
// rows of topic_subscriptions for its address (shared/contacts/topic-choices.ts), so deleting a contact leaves
// them: an address that opted out stays opted out.
import { isDeepStrictEqual } from 'node:util';
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { paginate, type ListQuery } from '../pagination.ts';
import { contactAddress, contactLookup } from './address.ts';
import { admitNewContact, lockAllowance } from './allowance.ts';
import { recordContactEvent, segmentIdsOf } from './events.ts';
import { fieldError, type PropertyValue } from './property-values.ts';
import { checkPropertyValues, lockSegments, type Ref, type TopicChoiceRef } from './references.ts';
import type { ContactRow } from './rows.ts';
import { recordTopicChoices } from './topic-choices.ts';

export type { ContactRow } from './rows.ts';

export interface CreateContactInput {
  email: string;
  first_name?: string | null;
  last_name?: string | null;
  unsubscribed?: boolean;
  /** A null value sets nothing. */
  properties?: Record<string, PropertyValue | null>;
  segments?: Ref[];
  topics?: TopicChoiceRef[];
}

export interface ContactChange {
  email?: string;
  /** null clears. */
  first_name?: string | null;
  last_name?: string | null;
  unsubscribed?: boolean;
  /** Merged into the contact's values; a null value removes one. */
  properties?: Record<string, PropertyValue | null>;
}

function addressOf(value: string): string {
  const parsed = contactAddress(value);
  if ('problem' in parsed) throw fieldError('email', parsed.problem);
  return parsed.address;
}

const taken = (email: string) => fieldError('email', `a contact with the address ${email} already exists`);

/**
 * Creates a contact with its memberships and topic choices, all or nothing; records `contact.created`. On a team with
 * a contact allowance a new billable contact past it is refused (403, shared/contacts/allowance.ts).
 */
export async function createContact(db: Knex, teamId: string, input: CreateContactInput): Promise<ContactRow> {
  const email = addressOf(input.email);
  return db.transaction(async (trx) => {
    const included = await lockAllowance(trx, teamId);
    const { set } = await checkPropertyValues(trx, teamId, input.properties ?? {});
    const segmentIds = await lockSegments(trx, teamId, input.segments ?? []);
    // No conflict target: the unique index is on (team_id, lower(email)), and no other conflict is possible.
    const [row] = await trx<ContactRow>('contacts')
      .insert({
        id: newId(),
        team_id: teamId,
        email,
        first_name: input.first_name ?? null,
        last_name: input.last_name ?? null,
        unsubscribed: input.unsubscribed ?? false,
        properties: JSON.stringify(set) as never,
      })
      .onConflict()
      .ignore()
      .returning('*');
    if (!row) throw taken(email);
    if (segmentIds.length)
      await trx('contact_segments').insert(
        segmentIds.map((segment_id) => ({ segment_id, contact_id: row.id, team_id: teamId })),
      );
    await recordTopicChoices(trx, teamId, email, input.topics ?? []);
    await admitNewContact(trx, teamId, included, email);
    await recordContactEvent(trx, row, 'created', [...segmentIds].sort());
    return row;
  });
}

/** The team's contacts named by id or address (any case); `lookup` as contactLookup answers. */
function whereContact(q: Knex.QueryBuilder, teamId: string, lookup: { id: string } | { email: string }) {
  q.where({ team_id: teamId });
  if ('id' in lookup) q.where({ id: lookup.id });
  else q.whereRaw('lower(email) = lower(?)', [lookup.email]);
  return q;
}

/** The team's contact named by id or address, or null (`forUpdate` locks it in the caller's transaction). */
export async function findContact(
  db: Knex,
  teamId: string,
  idOrEmail: string,
  forUpdate = false,
): Promise<ContactRow | null> {
  const lookup = contactLookup(idOrEmail);
  if (!lookup) return null;
  const q = whereContact(db<ContactRow>('contacts'), teamId, lookup).first();
  if (forUpdate) q.forUpdate();
  return (await q) ?? null;
}

/** A page of the team's contacts, newest first (a segment's members: shared/segments/membership.ts). */
/** Up to this many characters of search text (GET /contacts `search`). */
export const SEARCH_MAX_LENGTH = 200;

/**
 * A page of the team's contacts, newest first; with `search`, only those whose address, first or last name
 * contains it without regard to case. The text is data, never a pattern: LIKE with its metacharacters escaped
 * (standard_conforming_strings: '\\' is one backslash), on lower() of both sides, which PostgreSQL runs about twice
 * as fast as ILIKE. No index serves a substring: a search that few contacts match reads all of the team's (about
 * 0.1-0.3 s for 100,000 on the loaded bench machine; bench/README.md, the dashboard suite).
 */
export function listContacts(db: Knex, teamId: string, page: ListQuery & { search?: string }) {
  const q = db('contacts').where({ team_id: teamId });
  if (page.search !== undefined) {
    const pattern = `%${page.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    q.where((w) =>
      w
        .whereRaw(`lower(email) like ? escape '\\'`, [pattern])
        .orWhereRaw(`lower(first_name) like ? escape '\\'`, [pattern])
        .orWhereRaw(`lower(last_name) like ? escape '\\'`, [pattern]),
    );
  }
  return paginate<ContactRow>(q, page);
}

/**
 * Applies `change` (absent fields stay) and records `contact.updated` when something changed. A new address must
 * be free in the team; the old address's topic choices are copied to it where it has none of its own (the old
 * address keeps them too: its opt-outs still hold for mail sent to it). Null when there is no such contact.
 */
export async function updateContact(
  db: Knex,
  teamId: string,
  idOrEmail: string,
  change: ContactChange,
): Promise<ContactRow | null> {
  const email = change.email === undefined ? undefined : addressOf(change.email);
  return db.transaction(async (trx) => {
    const row = await findContact(trx, teamId, idOrEmail, true);
    if (!row) return null;
    const { set, unset } = await checkPropertyValues(trx, teamId, change.properties ?? {});
    const properties = { ...row.properties, ...set };
    for (const key of unset) delete properties[key];
    const next = {
      email: email ?? row.email,
      first_name: change.first_name === undefined ? row.first_name : change.first_name,
      last_name: change.last_name === undefined ? row.last_name : change.last_name,
      unsubscribed: change.unsubscribed ?? row.unsubscribed,
      properties,
    };
    const before = {
      email: row.email,
      first_name: row.first_name,
      last_name: row.last_name,
      unsubscribed: row.unsubscribed,
      properties: row.properties,
    };
    if (isDeepStrictEqual(next, before)) return row;
    const movedAddress = next.email.toLowerCase() !== row.email.toLowerCase();
    if (movedAddress) {
      const other = await findContact(trx, teamId, next.email);
      if (other) throw taken(next.email);
    }
    let updated: ContactRow;
    try {
      [updated] = await trx<ContactRow>('contacts')
        .where({ id: row.id })
        .update({ ...next, properties: JSON.stringify(properties) as never, updated_at: trx.fn.now() as never })
        .returning('*');
    } catch (err) {
      // Another request took the address between the check and the update.
      if ((err as { code?: string }).code === '23505') throw taken(next.email);
      throw err;
    }
    if (movedAddress)
      await trx.raw(
        `insert into topic_subscriptions (topic_id, team_id, email, subscription, source_email_id, updated_at)
        select topic_id, team_id, lower(?), subscription, source_email_id, now() from topic_subscriptions
        where team_id = ? and email = lower(?)
        on conflict (topic_id, email) do nothing`,
        [next.email, teamId, row.email],
      );
    await recordContactEvent(trx, updated, 'updated');
    return updated;
  });
}

/** Deletes the contact and its memberships; records `contact.deleted`. Null when there was none. */
export async function deleteContact(db: Knex, teamId: string, idOrEmail: string): Promise<ContactRow | null> {
  return db.transaction(async (trx) => {
    const row = await findContact(trx, teamId, idOrEmail, true);
    if (!row) return null;
    const segmentIds = await segmentIdsOf(trx, row.id);
    await trx('contacts').where({ id: row.id }).delete();
    await recordContactEvent(trx, row, 'deleted', segmentIds);
    return row;
  });
}
