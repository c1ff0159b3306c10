// What a contact write names besides the contact: segments, topics and property keys of the team. Each is checked
// and locked (KEY SHARE) in the caller's transaction, so none can be deleted before the write commits; a name of
// another team is as unknown as one of nothing, and the refusal is a 422 naming the field that carried it.
import type { Knex } from 'knex';
import { isUuid } from '../ids.ts';
import type { TopicSubscription } from '../topics/topics.ts';
import { propertyTypesOf } from './properties.ts';
import { fieldError, valueProblem, type PropertyValue } from './property-values.ts';

/** An id as the request gave it, with the field that carried it (`segments.0.id`). */
export interface Ref {
  id: string;
  path: string;
}

export interface TopicChoiceRef extends Ref {
  subscription: TopicSubscription;
}

async function lockOwned(db: Knex, table: 'segments' | 'topics', teamId: string, refs: Ref[], what: string) {
  if (refs.length === 0) return [];
  const ids = [...new Set(refs.map((r) => r.id).filter(isUuid))];
  const found = new Set<string>(
    ids.length
      ? (await db(table).where({ team_id: teamId }).whereIn('id', ids).forKeyShare().select('id')).map((r) => r.id)
      : [],
  );
  const missing = refs.find((r) => !found.has(r.id));
  if (missing) throw fieldError(missing.path, `no ${what} of this team has the id ${missing.id}`);
  return [...found];
}

/** The distinct segment ids named, all the team's; else 422 naming the first that is not. */
export function lockSegments(db: Knex, teamId: string, refs: Ref[]): Promise<string[]> {
  return lockOwned(db, 'segments', teamId, refs, 'segment');
}

/** Checks every topic named is the team's; else 422 naming the first that is not. */
export async function lockTopics(db: Knex, teamId: string, refs: Ref[]): Promise<void> {
  await lockOwned(db, 'topics', teamId, refs, 'topic');
}

/**
 * Property values as a request gave them (`null` removes a value), checked against the team's properties: an
 * unknown key or a value of the wrong type is a 422 naming `properties.<key>`.
 */
export async function checkPropertyValues(
  db: Knex,
  teamId: string,
  values: Record<string, PropertyValue | null>,
): Promise<{ set: Record<string, PropertyValue>; unset: string[] }> {
  const keys = Object.keys(values);
  const types = await propertyTypesOf(db, teamId, keys);
  const set: [string, PropertyValue][] = [];
  const unset: string[] = [];
  for (const key of keys) {
    const path = `properties.${key}`;
    const type = types.get(key);
    if (!type) throw fieldError(path, 'no contact property has this key (create it with POST /contact-properties)');
    const value = values[key];
    if (value === null) {
      unset.push(key);
      continue;
    }
    const problem = valueProblem(type, value);
    if (problem) throw fieldError(path, problem);
    set.push([key, value]);
  }
  // fromEntries defines each key as data, whatever its name.
  return { set: Object.fromEntries(set), unset };
}
