// Contact properties: a team's typed custom fields. Every function takes `db` first and the team; another team's
// property is as absent as one that never existed. `key` and `type` are fixed at creation (a contact's values are
// stored under the key), only `fallback_value` changes; deleting a property removes its values from every contact.
import type { Knex } from 'knex';
import { newId, isUuid } from '../ids.ts';
import { paginate, type ListQuery } from '../pagination.ts';
import { fieldError, valueProblem, type PropertyType, type PropertyValue } from './property-values.ts';

export interface ContactPropertyRow {
  id: string;
  team_id: string;
  key: string;
  type: PropertyType;
  fallback_value: PropertyValue | null;
  created_at: Date;
  updated_at: Date;
}

export interface CreatePropertyInput {
  key: string;
  type: PropertyType;
  fallback_value?: PropertyValue | null;
}

function checkFallback(type: PropertyType, value: PropertyValue | null | undefined): void {
  if (value === null || value === undefined) return;
  const problem = valueProblem(type, value);
  if (problem) throw fieldError('fallback_value', problem);
}

/** jsonb parameters go as JSON text: pg would send a bare string as text, which is not JSON. */
const json = (value: PropertyValue | null | undefined) =>
  value === null || value === undefined ? null : JSON.stringify(value);

export async function createProperty(
  db: Knex,
  teamId: string,
  input: CreatePropertyInput,
): Promise<ContactPropertyRow> {
  checkFallback(input.type, input.fallback_value);
  const [row] = await db<ContactPropertyRow>('contact_properties')
    .insert({
      id: newId(),
      team_id: teamId,
      key: input.key,
      type: input.type,
      fallback_value: json(input.fallback_value) as never,
    })
    .onConflict(['team_id', 'key'])
    .ignore()
    .returning('*');
  if (!row) throw fieldError('key', `a contact property with the key ${input.key} already exists`);
  return row;
}

export async function getProperty(db: Knex, teamId: string, id: string): Promise<ContactPropertyRow | null> {
  if (!isUuid(id)) return null;
  return (await db<ContactPropertyRow>('contact_properties').where({ team_id: teamId, id }).first()) ?? null;
}

/** A page of the team's properties, newest first. */
export function listProperties(db: Knex, teamId: string, page: ListQuery) {
  return paginate<ContactPropertyRow>(db('contact_properties').where({ team_id: teamId }), page);
}

/**
 * Sets the fallback value (undefined: no change, null: none). `key` and `type` may be sent back as they are (the
 * SDK sends them when the caller passes them); a different value is refused, naming the field.
 */
export async function updateProperty(
  db: Knex,
  teamId: string,
  id: string,
  change: { key?: string; type?: PropertyType; fallback_value?: PropertyValue | null },
): Promise<ContactPropertyRow | null> {
  return db.transaction(async (trx) => {
    if (!isUuid(id)) return null;
    const row = await trx<ContactPropertyRow>('contact_properties').where({ team_id: teamId, id }).forUpdate().first();
    if (!row) return null;
    if (change.key !== undefined && change.key !== row.key)
      throw fieldError('key', 'cannot be changed after the property is created');
    if (change.type !== undefined && change.type !== row.type)
      throw fieldError('type', 'cannot be changed after the property is created');
    if (change.fallback_value === undefined) return row;
    checkFallback(row.type, change.fallback_value);
    const [updated] = await trx<ContactPropertyRow>('contact_properties')
      .where({ id })
      .update({ fallback_value: json(change.fallback_value) as never, updated_at: trx.fn.now() as never })
      .returning('*');
    return updated;
  });
}

/** Deletes the property and, in the same transaction, its value on every contact of the team. */
export async function deleteProperty(db: Knex, teamId: string, id: string): Promise<ContactPropertyRow | null> {
  if (!isUuid(id)) return null;
  return db.transaction(async (trx) => {
    const [row] = await trx<ContactPropertyRow>('contact_properties')
      .where({ team_id: teamId, id })
      .delete()
      .returning('*');
    if (!row) return null;
    // `\\?` is jsonb's key-exists operator (knex would read a bare `?` as a binding).
    await trx.raw(
      `update contacts set properties = properties - ?::text, updated_at = now() where team_id = ? and properties \\? ?`,
      [row.key, teamId, row.key],
    );
    return row;
  });
}

/**
 * The types of the team's properties named by `keys`, locked against deletion until the caller's transaction
 * ends (so a value written under a key cannot outlive its property's deletion).
 */
export async function propertyTypesOf(db: Knex, teamId: string, keys: string[]): Promise<Map<string, PropertyType>> {
  if (keys.length === 0) return new Map();
  const rows: { key: string; type: PropertyType }[] = await db('contact_properties')
    .where({ team_id: teamId })
    .whereRaw('key = any(?)', [keys])
    .forKeyShare()
    .select('key', 'type');
  return new Map(rows.map((r) => [r.key, r.type]));
}
