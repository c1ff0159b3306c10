// Helpers for the accept path's raw SQL (persist.ts, rules.ts, api-keys/keys.ts), which runs as named prepared
// statements (shared/db/prepared.ts).

/**
 * A PostgreSQL text[] literal (`{"a","b"}`) for a `?::text[]` parameter: knex spreads a JS array binding into a
 * list of parameters. Every element is quoted, with `"` and backslash escaped (the array input syntax).
 */
export function textArray(list: string[]): string {
  return `{${list.map((v) => `"${v.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`;
}


/** A row read through row_to_json has its timestamps as ISO strings: these fields become Dates again. */
export function reviveDates<T extends object>(row: T, fields: readonly string[]): T {
  const r = row as Record<string, unknown>;
  for (const f of fields) if (typeof r[f] === 'string') r[f] = new Date(r[f] as string);
  return row;
}
