// Helpers for the accept path's raw SQL (persist.ts, rules.ts): it runs on every send, and building it with knex
// cost more than running it.

/**
 * A PostgreSQL text[] literal (`{"a","b"}`) for a `?::text[]` parameter: knex spreads a JS array binding into a
 * list of parameters. Every element is quoted, with `"` and backslash escaped (the array input syntax).
 */
export function textArray(list: string[]): string {
  return `{${list.map((v) => `"${v.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`;
}
