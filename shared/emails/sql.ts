// Helpers for raw SQL read through row_to_json (the accept path, api-keys/keys.ts, the mta's takeLease), which runs as
// named prepared statements (shared/db/prepared.ts).

/** A row read through row_to_json has its timestamps as ISO strings: these fields become Dates again. */
export function reviveDates<T extends object>(row: T, fields: readonly string[]): T {
  const r = row as Record<string, unknown>;
  for (const f of fields) if (typeof r[f] === 'string') r[f] = new Date(r[f] as string);
  return row;
}
