// The segment filter language: JSON, checked here by its shape and limits (the team's property keys and types and
// its topics are checked against the database by filter-check.ts), compiled to SQL by filter-sql.ts.
//
//   filter    = group | condition
//   group     = {"all": [filter, ...]} | {"any": [filter, ...]} | {"not": filter}
//   condition = {"field": ..., "operator": ..., and "value", "key", "topic_id" or "days" as the field needs}
//
// Every condition is true or false for every contact (never unknown), so `not` and `any` mean what they say. The
// schema below is also what the OpenAPI document shows; the walk in `checkShape` runs first so that a bad input is
// named by its own path (`filter.all.2.any.0.value`) rather than by the union that could not match it.
import { z } from 'zod';
import { EMAIL_MAX_LENGTH } from '../contacts/address.ts';
import { KEY_PATTERN, STRING_VALUE_MAX_LENGTH } from '../contacts/property-values.ts';

/** Groups from the root to the deepest condition: `{"all": [condition]}` is 1. */
export const FILTER_MAX_DEPTH = 5;
export const FILTER_MAX_CONDITIONS = 50;
export const DAYS_MAX = 3650;
/** As long as a contact's first or last name can be (PERSON_NAME_MAX_LENGTH of api/routes/contact-schemas.ts). */
const NAME_MAX_LENGTH = 256;

const textOperators = ['equals', 'not_equals', 'contains', 'starts_with', 'ends_with'] as const;
const setOperators = ['is_set', 'is_not_set'] as const;
const numberOperators = ['greater_than', 'greater_than_or_equal', 'less_than', 'less_than_or_equal'] as const;
const engagementFields = ['received', 'opened', 'clicked'] as const;

export type TextOperator = (typeof textOperators)[number];
export type NumberOperator = (typeof numberOperators)[number];
export type EngagementField = (typeof engagementFields)[number];

const textOperator = (equals: string) =>
  z
    .enum(textOperators)
    .describe(
      `\`equals\`, \`not_equals\`: ${equals}; \`contains\`, \`starts_with\`, \`ends_with\`: a part of it, without regard to case.`,
    );
const text = (max: number) => z.string().min(1).max(max).describe(`1-${max} characters.`);
const days = z
  .number()
  .int()
  .min(1)
  .max(DAYS_MAX)
  .describe(`A whole number of days, 1-${DAYS_MAX}, counted back from the moment of the query.`);

const emailCondition = z
  .strictObject({
    field: z.literal('email').describe("The contact's address."),
    operator: textOperator('the address, without regard to case'),
    value: text(EMAIL_MAX_LENGTH),
  })
  .describe("A condition on the contact's address (always set).");

const nameField = z.enum(['first_name', 'last_name']).describe("The contact's first or last name.");
const nameCondition = z.discriminatedUnion('operator', [
  z
    .strictObject({ field: nameField, operator: textOperator('the exact name'), value: text(NAME_MAX_LENGTH) })
    .describe('A name compared with a value; a contact without the name matches `not_equals` only.'),
  z
    .strictObject({
      field: nameField,
      operator: z.enum(setOperators).describe('`is_set`: the contact has the name; `is_not_set`: it has none.'),
    })
    .describe('Whether the contact has the name.'),
]);

const propertyKey = z
  .string()
  .regex(KEY_PATTERN, 'must be the key of a contact property of the team')
  .describe("The key of one of the team's contact properties (else 422 naming this field).");
const propertyField = z.literal('property').describe("One of the contact's property values.");
const propertyCondition = z.discriminatedUnion('operator', [
  z
    .strictObject({
      field: propertyField,
      key: propertyKey,
      operator: z
        .enum(['equals', 'not_equals'])
        .describe(
          '`equals`: the contact has exactly this value; `not_equals`: any other value, or none. Strings are compared exactly.',
        ),
      value: z
        .union([z.string().max(STRING_VALUE_MAX_LENGTH), z.number(), z.boolean()])
        .describe("A value of the property's type (else 422 naming this field)."),
    })
    .describe('A property value compared with a value of its type.'),
  z
    .strictObject({
      field: propertyField,
      key: propertyKey,
      operator: z
        .enum(['contains', 'starts_with', 'ends_with'])
        .describe('A part of a `string` property’s value, without regard to case.'),
      value: text(STRING_VALUE_MAX_LENGTH),
    })
    .describe('A part of a string property’s value.'),
  z
    .strictObject({
      field: propertyField,
      key: propertyKey,
      operator: z
        .enum(numberOperators)
        .describe('A `number` property’s value compared with `value`; a contact without a value matches none.'),
      value: z.number().describe('A number.'),
    })
    .describe('A number property compared with a number.'),
  z
    .strictObject({
      field: propertyField,
      key: propertyKey,
      operator: z
        .enum(setOperators)
        .describe('`is_set`: the contact has a value (of any property type); `is_not_set`: it has none.'),
    })
    .describe('Whether the contact has a value for the property (its fallback value does not count).'),
]);

const topicCondition = z
  .strictObject({
    field: z.literal('topic').describe('A topic subscription.'),
    topic_id: z.string().max(100).describe("One of the team's topics (else 422 naming this field)."),
    operator: z
      .enum(['subscribed', 'not_subscribed'])
      .describe(
        "`subscribed`: the contact's address chose `opt_in`, or made no choice and the topic's default is `opt_in`; `not_subscribed`: the other addresses.",
      ),
  })
  .describe("The contact's choice for a topic, else the topic's default (global `unsubscribed` is its own field).");

const createdField = z.literal('created_at').describe('When the contact was created.');
const createdCondition = z.discriminatedUnion('operator', [
  z
    .strictObject({
      field: createdField,
      operator: z.enum(['before', 'after']).describe('Created before (or after) the moment `value`.'),
      value: z.iso.datetime({ offset: true }).describe('An ISO 8601 date and time.'),
    })
    .describe('Created before or after a moment.'),
  z
    .strictObject({
      field: createdField,
      operator: z.literal('within_last_days').describe('Created within the last `days` days.'),
      days,
    })
    .describe('Created within the last N days.'),
]);

const unsubscribedCondition = z
  .strictObject({
    field: z.literal('unsubscribed').describe('Unsubscribed from everything the team sends to its contacts.'),
    operator: z.literal('equals').describe('The flag equals `value`.'),
    value: z.boolean().describe('`true` or `false`.'),
  })
  .describe("The contact's global `unsubscribed` flag.");

const engagementCondition = z
  .strictObject({
    field: z
      .enum(engagementFields)
      .describe(
        "What happened to the team's mail at the contact's address: `received` (a copy was delivered: `email.delivered`), `opened`, `clicked`.",
      ),
    operator: z
      .enum(['within_last_days', 'not_within_last_days'])
      .describe('It happened within the last `days` days; or it did not (never, or longer ago).'),
    days,
  })
  .describe('Engagement: mail delivered to, opened or clicked at the address, in the last N days or not.');

export const filterCondition = z.discriminatedUnion('field', [
  emailCondition,
  nameCondition,
  propertyCondition,
  topicCondition,
  createdCondition,
  unsubscribedCondition,
  engagementCondition,
]);

export type FilterCondition = z.output<typeof filterCondition>;
export type FilterNode = { all: FilterNode[] } | { any: FilterNode[] } | { not: FilterNode } | FilterCondition;

const groupItems = (how: string) =>
  z
    .array(z.lazy(() => filterNode))
    .min(1)
    .max(FILTER_MAX_CONDITIONS)
    .describe(`${how} (groups nest up to ${FILTER_MAX_DEPTH} deep).`);

const filterNode: z.ZodType<FilterNode> = z
  .lazy(() =>
    z.union([
      z.strictObject({ all: groupItems('Filters that must all match') }).describe('Every filter in it matches.'),
      z.strictObject({ any: groupItems('Filters of which one must match') }).describe('At least one matches.'),
      z.strictObject({ not: filterNode }).describe('The filter in it does not match.'),
      filterCondition,
    ]),
  )
  .meta({
    id: 'SegmentFilter',
    description: `A group (\`all\`, \`any\`, \`not\`) or a condition (\`field\`, \`operator\` and what the field needs); groups nest up to ${FILTER_MAX_DEPTH} deep, with at most ${FILTER_MAX_CONDITIONS} conditions in all.`,
  });

type Issue = { path: (string | number)[]; message: string };

/** The issues of one condition, each at the field it concerns (an unknown key at that key). */
function conditionIssues(value: unknown, path: (string | number)[]): Issue[] {
  const r = filterCondition.safeParse(value);
  if (r.success) return [];
  return r.error.issues.map((i) => ({
    path: [...path, ...(i.path as (string | number)[]), ...(i.code === 'unrecognized_keys' ? [i.keys[0]] : [])],
    message: i.message,
  }));
}

const groupKeys = ['all', 'any', 'not'] as const;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Walks the filter in order: its shape, its depth and its number of conditions, each problem at its own path. */
function walk(node: unknown, path: (string | number)[], depth: number, state: { conditions: number }): Issue[] {
  if (!isObject(node))
    return [{ path, message: 'must be a group (`all`, `any` or `not`) or a condition (an object with `field`)' }];
  const keys = Object.keys(node);
  const group = groupKeys.find((k) => k in node);
  if (!group) {
    if (!('field' in node)) return [{ path, message: 'must be a group (`all`, `any` or `not`) or a condition' }];
    state.conditions++;
    if (state.conditions > FILTER_MAX_CONDITIONS)
      return [{ path, message: `a filter has at most ${FILTER_MAX_CONDITIONS} conditions` }];
    return conditionIssues(node, path);
  }
  const other = keys.find((k) => k !== group);
  if (other !== undefined) return [{ path: [...path, other], message: `a group has only its \`${group}\`` }];
  const at = [...path, group];
  if (depth + 1 > FILTER_MAX_DEPTH) return [{ path: at, message: `groups nest at most ${FILTER_MAX_DEPTH} deep` }];
  const inner = node[group];
  if (group === 'not') return walk(inner, at, depth + 1, state);
  if (!Array.isArray(inner) || inner.length === 0)
    return [{ path: at, message: 'must be a list of 1 or more filters' }];
  const issues: Issue[] = [];
  for (const [i, item] of inner.entries()) {
    issues.push(...walk(item, [...at, i], depth + 1, state));
    if (issues.length) break;
  }
  return issues;
}

/** The problems of a filter as the API took it, at paths relative to the filter; none for a valid one. */
export function filterIssues(value: unknown): Issue[] {
  return walk(value, [], 0, { conditions: 0 });
}

/** A segment filter in a request body: checked by the walk, then typed by the (documented) schema. */
export const segmentFilter = z.preprocess((value, ctx) => {
  for (const issue of filterIssues(value)) ctx.issues.push({ code: 'custom', input: value, ...issue });
  return value;
}, filterNode);

/** The conditions of a filter, each with its path from the filter (`all.2.any.0`). */
export function conditionsOf(node: FilterNode, path: (string | number)[] = []): [FilterCondition, string][] {
  if ('all' in node) return node.all.flatMap((n, i) => conditionsOf(n, [...path, 'all', i]));
  if ('any' in node) return node.any.flatMap((n, i) => conditionsOf(n, [...path, 'any', i]));
  if ('not' in node) return conditionsOf(node.not, [...path, 'not']);
  return [[node, path.join('.')]];
}
