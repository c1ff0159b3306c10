// The form of POST /contacts/imports besides the file (interface spec, Contact imports): `column_map` resolved
// against the file's header row and the team's contact properties, `on_conflict`, `segments` and `topics`. Every
// refusal is a 422 naming the field (`column_map.first_name`, `column_map.properties.plan.type`, `segments.0.id`);
// the import is then never stored.
import { z } from 'zod';
import type { Knex } from 'knex';
import { lockSegments, lockTopics } from '../contacts/references.ts';
import { propertyTypesOf } from '../contacts/properties.ts';
import { propertyTypes, VALUES_MAX_COUNT, type PropertyType } from '../contacts/property-values.ts';
import { subscriptions, type TopicSubscription } from '../topics/topics.ts';
import { formError } from './limits.ts';

/** The columns of a contact an import fills, by the name column_map gives them. */
export const contactFields = [
  'email',
  'first_name',
  'last_name',
  'full_name',
  'unsubscribed',
  'subscription_status',
] as const;
type Field = (typeof contactFields)[number];

/** column_map resolved: each field as the index of its column in the header row (null: not read). */
export type ColumnMap = Record<Field, number | null> & {
  email: number;
  properties: { key: string; column: number; type: PropertyType }[];
};

export interface ImportTopic {
  id: string;
  subscription: TopicSubscription;
}

export interface ImportRequest {
  columnMap: ColumnMap;
  onConflict: 'upsert' | 'skip';
  segmentIds: string[];
  topics: ImportTopic[];
}

const columnName = z.string().min(1).max(1000);
const columnMapSchema = z
  .object({
    email: columnName.optional(),
    first_name: columnName.optional(),
    last_name: columnName.optional(),
    full_name: columnName.optional(),
    unsubscribed: columnName.optional(),
    subscription_status: columnName.optional(),
    properties: z
      .record(
        z.string(),
        z.union([columnName, z.object({ column: columnName, type: z.enum(propertyTypes).optional() }).strict()]),
      )
      .refine((p) => Object.keys(p).length <= VALUES_MAX_COUNT, `at most ${VALUES_MAX_COUNT} properties`)
      .optional(),
  })
  .strict();
const idRef = z.union([z.string().max(100), z.object({ id: z.string().max(100) })]);
const segmentsSchema = z.array(idRef).max(100);
const topicsSchema = z.array(z.object({ id: z.string().max(100), subscription: z.enum(subscriptions) })).max(100);

/** A form field's JSON checked by `schema`; a 422 naming the field (or the part of it) that does not fit. */
function jsonField<S extends z.ZodType>(name: string, text: string, schema: S): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw formError(name, 'is not valid JSON');
  }
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const unknown = issue.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
  const path = [name, ...issue.path.map(String), ...(unknown === undefined ? [] : [unknown])].join('.');
  throw formError(path, unknown === undefined ? issue.message : 'is not a key this field takes');
}

/** The index of the header column named `name`: exactly, else without regard to case. */
function columnIndex(columns: string[], name: string): number | null {
  const exact = columns.indexOf(name.trim());
  if (exact >= 0) return exact;
  const lower = name.trim().toLowerCase();
  const i = columns.findIndex((c) => c.toLowerCase() === lower);
  return i >= 0 ? i : null;
}

function listed(columns: string[]): string {
  const shown = columns.slice(0, 20).map((c) => `\`${c}\``);
  return shown.join(', ') + (columns.length > 20 ? `, and ${columns.length - 20} more` : '');
}

/**
 * column_map against the header row. A field it does not name (all of them, without one) is read from the column of
 * its own name, without regard to case (`email`, `first_name`, ..., `subscription_status`), if the header has one.
 * Properties are read only as it names them: keys of the team's, a stated `type` the property's.
 */
export async function resolveColumnMap(
  db: Knex,
  teamId: string,
  columns: string[],
  text: string | undefined,
): Promise<ColumnMap> {
  const given = text === undefined ? undefined : jsonField('column_map', text, columnMapSchema);
  const found: Record<string, number | null> = {};
  for (const field of contactFields) {
    const name = given?.[field];
    if (name === undefined) {
      found[field] = columnIndex(columns, field);
      continue;
    }
    const index = columnIndex(columns, name);
    if (index === null)
      throw formError(
        `column_map.${field}`,
        `names \`${name}\`, which is not a column of the file (${listed(columns)})`,
      );
    found[field] = index;
  }
  if (found.email === null) {
    const where = given === undefined ? 'file' : 'column_map.email';
    throw formError(where, `names no column for the address: the header row has no \`email\` (${listed(columns)})`);
  }
  const map = { ...found, properties: [] } as unknown as ColumnMap;
  const entries = Object.entries(given?.properties ?? {});
  const types = await propertyTypesOf(
    db,
    teamId,
    entries.map(([key]) => key),
  );
  for (const [key, entry] of entries) {
    const path = `column_map.properties.${key}`;
    const type = types.get(key);
    if (!type) throw formError(path, 'no contact property has this key (create it with POST /contact-properties)');
    const { column, type: stated } = typeof entry === 'string' ? { column: entry, type: undefined } : entry;
    if (stated !== undefined && stated !== type)
      throw formError(`${path}.type`, `is ${stated}, but the property's type is ${type}`);
    const index = columnIndex(columns, column);
    if (index === null)
      throw formError(path, `names \`${column}\`, which is not a column of the file (${listed(columns)})`);
    map.properties.push({ key, column: index, type });
  }
  return map;
}

/** on_conflict, segments and topics; the segments and topics checked (and locked) as the team's. */
export async function resolveOptions(
  db: Knex,
  teamId: string,
  fields: { on_conflict?: string; segments?: string; topics?: string },
): Promise<Omit<ImportRequest, 'columnMap'>> {
  const onConflict = fields.on_conflict ?? 'skip';
  if (onConflict !== 'upsert' && onConflict !== 'skip') throw formError('on_conflict', 'must be `upsert` or `skip`');
  const segments = fields.segments === undefined ? [] : jsonField('segments', fields.segments, segmentsSchema);
  const topics = fields.topics === undefined ? [] : jsonField('topics', fields.topics, topicsSchema);
  const segmentIds = await lockSegments(
    db,
    teamId,
    segments.map((s, i) =>
      typeof s === 'string' ? { id: s, path: `segments.${i}` } : { id: s.id, path: `segments.${i}.id` },
    ),
  );
  await lockTopics(
    db,
    teamId,
    topics.map((t, i) => ({ id: t.id, path: `topics.${i}.id` })),
  );
  // A topic named twice takes the last choice, as a contact's topics do.
  const latest = new Map(topics.map((t) => [t.id, t.subscription]));
  return { onConflict, segmentIds, topics: [...latest].map(([id, subscription]) => ({ id, subscription })) };
}
