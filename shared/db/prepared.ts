// A hot statement as a named prepared statement of node-postgres: PostgreSQL parses and plans it once per
// connection instead of at every call, and knex's query building and binding rewriting are skipped (they cost
// more than running the statement). For statements that run once per request or message: the accept path
// (shared/emails/, shared/api-keys/keys.ts), request logs, the mta's takeLease and records. Works on a knex
// transaction too (its client hands out the transaction's connection).
//
// The SQL may use `?` placeholders (each becomes $1, $2... in order, once per text) or `$n` ones, never the `?`
// operators of jsonb. Bindings go to node-postgres as they are (a JS array becomes a PostgreSQL array, a Date a
// timestamp, an object JSON). The text under one name must never change, and its result columns must not depend on a
// table's column list (no `t.*`, use `row_to_json(t.*)`): a column added while the process runs would otherwise fail
// the cached plan ("cached plan must not change result type").
import type { Knex } from 'knex';

interface PgConnection {
  query(config: { name: string; text: string; values: readonly unknown[] }): Promise<{ rows: unknown[] }>;
}

const positional = new Map<string, string>();

function toPositional(sql: string): string {
  let text = positional.get(sql);
  if (text === undefined) {
    let n = 0;
    text = sql.replace(/\?/g, () => `$${++n}`);
    positional.set(sql, text);
  }
  return text;
}

export async function prepared<T>(db: Knex, name: string, sql: string, values: readonly unknown[]): Promise<T[]> {
  const connection = (await db.client.acquireConnection()) as PgConnection;
  try {
    return (await connection.query({ name, text: toPositional(sql), values })).rows as T[];
  } finally {
    await db.client.releaseConnection(connection);
  }
}
