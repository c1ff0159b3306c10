// A hot statement as a named prepared statement of node-postgres: PostgreSQL parses and plans it once per
// connection instead of at every call, and knex's query building is skipped. For statements that run once per
// message (the mta's job); the text must use $1..$n placeholders. Outside a transaction only.
import type { Knex } from 'knex';

interface PgConnection {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

export async function runPrepared<T>(db: Knex, name: string, text: string, values: unknown[]): Promise<T[]> {
  const connection = (await db.client.acquireConnection()) as PgConnection;
  try {
    return (await connection.query({ name, text, values })).rows as T[];
  } finally {
    await db.client.releaseConnection(connection);
  }
}
