// A segment filter compiled to one SQL predicate over a contacts row (`c`): fixed SQL text with `?` placeholders
// and its bindings, so nothing a request wrote is ever part of the SQL text. Every piece is true or false, never
// null (a missing name, property or choice is false, not unknown), so `not (...)` is exactly the contacts the
// filter does not match.
//
// Topic and engagement conditions are `exists` subqueries on topic_subscriptions and contact_activity, keyed by the
// contact's lower-cased address as those tables are: under the filter's top-level `all` PostgreSQL turns them into
// (anti-)joins, under `any` or `not` it looks each contact up by the tables' primary keys.
import type { Knex } from 'knex';
import { isUuid } from '../ids.ts';
import type { TopicSubscription } from '../topics/topics.ts';
import { conditionsOf, type EngagementField, type FilterCondition, type FilterNode } from './filter-schema.ts';

export interface Sql {
  sql: string;
  bindings: Knex.Value[];
}

/** What the SQL depends on besides the filter: the default subscription of each topic it names that still exists. */
export interface FilterContext {
  topicDefaults: Map<string, TopicSubscription>;
}

const sql = (text: string, ...bindings: Knex.Value[]): Sql => ({ sql: text, bindings });
const not = (s: Sql): Sql => sql(`not (${s.sql})`, ...s.bindings);
const FALSE = sql('false');

const engagementColumn: Record<EngagementField, string> = {
  received: 'last_delivered_at',
  opened: 'last_opened_at',
  clicked: 'last_clicked_at',
};

type TextCondition = Extract<FilterCondition, { field: 'email' | 'first_name' | 'last_name'; value: string }>;

/** A text comparison on `column` (never null: a null column compares false). */
function textSql(column: string, operator: TextCondition['operator'], value: string, exactCase: boolean): Sql {
  switch (operator) {
    case 'equals':
      return exactCase ? sql(`coalesce(${column} = ?, false)`, value) : sql(`lower(${column}) = lower(?)`, value);
    case 'not_equals':
      return not(textSql(column, 'equals', value, exactCase));
    case 'contains':
      return sql(`coalesce(strpos(lower(${column}), lower(?)) > 0, false)`, value);
    case 'starts_with':
      return sql(`coalesce(starts_with(lower(${column}), lower(?)), false)`, value);
    case 'ends_with':
      return sql(`coalesce(right(lower(${column}), char_length(?::text)) = lower(?), false)`, value, value);
  }
}

type PropertyCondition = Extract<FilterCondition, { field: 'property' }>;

const numberComparison = {
  greater_than: '>',
  greater_than_or_equal: '>=',
  less_than: '<',
  less_than_or_equal: '<=',
} as const;

function propertySql(c: PropertyCondition): Sql {
  const value = `c.properties -> ?::text`;
  switch (c.operator) {
    case 'is_set':
      return sql(`(${value}) is not null`, c.key);
    case 'is_not_set':
      return sql(`(${value}) is null`, c.key);
    // Containment matches the JSON type too ("5" is not 5); a GIN index (jsonb_path_ops) would serve it, and was left
    // out on measurement (bench/README.md, the segments suite).
    case 'equals':
      return sql(`c.properties @> ?::jsonb`, JSON.stringify({ [c.key]: c.value }));
    case 'not_equals':
      return not(propertySql({ ...c, operator: 'equals' }));
    case 'contains':
    case 'starts_with':
    case 'ends_with': {
      // The column's placeholder comes first in the comparison's text, before the value's.
      const text = textSql(`(c.properties ->> ?::text)`, c.operator, c.value, false);
      return sql(`(jsonb_typeof(${value}) = 'string' and ${text.sql})`, c.key, c.key, ...text.bindings);
    }
    default:
      // A value of another type (the property deleted and made again with another type) compares false, no error.
      return sql(
        `case when jsonb_typeof(${value}) = 'number' then (c.properties ->> ?::text)::numeric ${numberComparison[c.operator]} ?::numeric else false end`,
        c.key,
        c.key,
        c.value,
      );
  }
}

function topicSql(topicId: string, subscribed: boolean, ctx: FilterContext): Sql {
  const byDefault = ctx.topicDefaults.get(topicId);
  // A topic deleted since the filter was written has no subscribers.
  if (!byDefault) return subscribed ? FALSE : not(FALSE);
  // The address's own choice, else the topic's default: only the choice against the default needs a look-up.
  const against = byDefault === 'opt_in' ? 'opt_out' : 'opt_in';
  const chose = sql(
    `exists (select 1 from topic_subscriptions s where s.topic_id = ?::uuid and s.email = lower(c.email) and s.subscription = ?)`,
    topicId,
    against,
  );
  if (byDefault === 'opt_out') return subscribed ? chose : not(chose);
  // An opt_in default does not reach a contact that never subscribed (an import said so): only its own opt_in does.
  const own = sql(
    `exists (select 1 from topic_subscriptions s where s.topic_id = ?::uuid and s.email = lower(c.email) and s.subscription = 'opt_in')`,
    topicId,
  );
  const reached = sql(
    `(${own.sql} or (not c.never_subscribed and ${not(chose).sql}))`,
    ...own.bindings,
    ...not(chose).bindings,
  );
  return subscribed ? reached : not(reached);
}

function engagementSql(field: EngagementField, days: number): Sql {
  return sql(
    `exists (select 1 from contact_activity x where x.team_id = c.team_id and x.address = lower(c.email) and x.${engagementColumn[field]} >= now() - make_interval(days => ?::int))`,
    days,
  );
}

function conditionSql(c: FilterCondition, ctx: FilterContext): Sql {
  switch (c.field) {
    case 'email':
      return textSql('c.email', c.operator, c.value, false);
    case 'first_name':
    case 'last_name':
      if (!('value' in c)) return sql(`(c.${c.field} is ${c.operator === 'is_set' ? 'not ' : ''}null)`);
      return textSql(`c.${c.field}`, c.operator, c.value, true);
    case 'property':
      return propertySql(c);
    case 'topic':
      return topicSql(c.topic_id, c.operator === 'subscribed', ctx);
    case 'created_at':
      if (c.operator === 'within_last_days')
        return sql(`c.created_at >= now() - make_interval(days => ?::int)`, c.days);
      return sql(`c.created_at ${c.operator === 'before' ? '<' : '>'} ?::timestamptz`, c.value);
    case 'unsubscribed':
      return sql(`c.unsubscribed = ?::boolean`, c.value);
    case 'received':
    case 'opened':
    case 'clicked': {
      const within = engagementSql(c.field, c.days);
      return c.operator === 'within_last_days' ? within : not(within);
    }
  }
}

/** The filter as a predicate over the contacts row `c` (the caller scopes the query by team). */
export function compileFilter(node: FilterNode, ctx: FilterContext): Sql {
  if ('not' in node) return not(compileFilter(node.not, ctx));
  if ('all' in node || 'any' in node) {
    const [items, joiner] = 'all' in node ? [node.all, ' and '] : [node.any, ' or '];
    const parts = items.map((n) => compileFilter(n, ctx));
    return sql(`(${parts.map((p) => p.sql).join(joiner)})`, ...parts.flatMap((p) => p.bindings));
  }
  return conditionSql(node, ctx);
}

/** The team's topics the filter names, with their defaults (fixed at a topic's creation). */
export async function filterContext(db: Knex, teamId: string, filter: FilterNode): Promise<FilterContext> {
  const ids = [
    ...new Set(conditionsOf(filter).flatMap(([c]) => (c.field === 'topic' && isUuid(c.topic_id) ? [c.topic_id] : []))),
  ];
  const rows: { id: string; default_subscription: TopicSubscription }[] = ids.length
    ? await db('topics').where({ team_id: teamId }).whereIn('id', ids).select('id', 'default_subscription')
    : [];
  return { topicDefaults: new Map(rows.map((r) => [r.id, r.default_subscription])) };
}
