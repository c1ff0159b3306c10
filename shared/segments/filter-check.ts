// What a filter names besides itself, checked against the team when a segment is written: each property key must
// be one of the team's contact properties, with an operator and a value of its type, and each topic one of the
// team's topics. A refusal is a 422 naming the field in the filter (`filter.all.0.key`). Both are locked (KEY
// SHARE) until the write commits, as a contact's write locks what it names (shared/contacts/references.ts). A
// property or topic deleted later leaves the filter as it is: its conditions then read what is left (no value, no
// choice; filter-sql.ts).
import type { Knex } from 'knex';
import { propertyTypesOf } from '../contacts/properties.ts';
import { fieldError, valueProblem, type PropertyType } from '../contacts/property-values.ts';
import { lockTopics } from '../contacts/references.ts';
import { conditionsOf, type FilterCondition, type FilterNode } from './filter-schema.ts';

type PropertyCondition = Extract<FilterCondition, { field: 'property' }>;

/** The operators each property type takes besides `is_set` and `is_not_set`. */
const operatorsOf: Record<PropertyType, string[]> = {
  string: ['equals', 'not_equals', 'contains', 'starts_with', 'ends_with'],
  number: ['equals', 'not_equals', 'greater_than', 'greater_than_or_equal', 'less_than', 'less_than_or_equal'],
  boolean: ['equals', 'not_equals'],
};

const fieldPath = (path: string, field: string) => ['filter', path, field].filter(Boolean).join('.');

function checkProperty(condition: PropertyCondition, path: string, type: PropertyType | undefined): void {
  if (!type)
    throw fieldError(
      fieldPath(path, 'key'),
      `no contact property of this team has the key ${condition.key} (create it with POST /contact-properties)`,
    );
  // is_set and is_not_set (no value) apply to every type.
  if (!('value' in condition)) return;
  const { operator } = condition;
  if (!operatorsOf[type].includes(operator))
    throw fieldError(
      fieldPath(path, 'operator'),
      `${operator} does not apply to ${condition.key}, a ${type} property (it takes ${operatorsOf[type].join(', ')}, is_set, is_not_set)`,
    );
  const problem = valueProblem(type, condition.value);
  if (problem) throw fieldError(fieldPath(path, 'value'), problem);
}

/** Checks and locks what the filter names (in the caller's transaction); else a 422 naming the first problem. */
export async function checkFilterReferences(trx: Knex, teamId: string, filter: FilterNode): Promise<void> {
  const conditions = conditionsOf(filter);
  const properties = conditions.filter((c): c is [PropertyCondition, string] => c[0].field === 'property');
  const types = await propertyTypesOf(trx, teamId, [...new Set(properties.map(([c]) => c.key))]);
  for (const [condition, path] of properties) checkProperty(condition, path, types.get(condition.key));
  const topics = conditions.flatMap(([c, path]) =>
    c.field === 'topic' ? [{ id: c.topic_id, path: fieldPath(path, 'topic_id') }] : [],
  );
  await lockTopics(trx, teamId, topics);
}
