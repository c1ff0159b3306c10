// Helpers for the accept path's raw SQL (persist.ts, rules.ts, api-keys/keys.ts): it runs on every send, and
// building it with knex cost more than running it.
import type { Knex } from 'knex';

/**
 * A PostgreSQL text[] literal (`{"a","b"}`) for a `?::text[]` parameter: knex spreads a JS array binding into a
 * list of parameters. Every element is quoted, with `"` and backslash escaped (the array input syntax).
 */
export function textArray(list: string[]): string {
  return `{${list.map((v) => `"${v.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`;
}

/**
 * Runs `sql` as a named prepared statement: each connection parses and plans it once, then only binds and
 * executes it. The text under one name must never change. Its result columns must not depend on a table's
 * column list (no `t.*`, use `row_to_json(t.*)`): a column added while the process runs would otherwise fail
 * the cached plan ("cached plan must not change result type").
 */
export async function prepared<T>(db: Knex, name: string, sql: string, bindings: readonly Knex.RawBinding[]): Promise<T[]> {
  const { rows } = await db.raw(sql, bindings).options({ name }) as { rows: T[] };
  return rows;
}

/** A row read through row_to_json has its timestamps as ISO strings: these fields become Dates again. */
export function reviveDates<T extends object>(row: T, fields: readonly string[]): T {
  const r = row as Record<string, unknown>;
  for (const f of fields) if (typeof r[f] === 'string') r[f] = new Date(r[f] as string);
  return row;
}
