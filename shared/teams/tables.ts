// The tables that hold a team's data, read from the database itself (information_schema), never from a list kept
// by hand: a table added by a later migration is exported and erased with the rest from its first day. A table
// holds team data when it has a `team_id` column; the few that reach a team only through a parent row (a webhook
// attempt through its delivery) go with the parent by their foreign key's ON DELETE CASCADE, and
// test/team-deletion.test.ts fails for any new table that is neither.
import type { Knex } from 'knex';

/** Tables of the public schema with a team_id column, children before parents (foreign keys between them). */
export async function teamTables(db: Knex): Promise<string[]> {
  const { rows: tables } = await db.raw(`select c.table_name as name from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = current_schema() and c.column_name = 'team_id' and t.table_type = 'BASE TABLE'
      and c.table_name <> 'teams' order by 1`);
  const names = new Set<string>((tables as { name: string }[]).map((r) => r.name));
  const { rows: edges } = await db.raw(`select conrelid::regclass::text as child, confrelid::regclass::text as parent
    from pg_constraint where contype = 'f' and connamespace = current_schema()::regnamespace`);
  const parents = new Map<string, Set<string>>();
  for (const e of edges as { child: string; parent: string }[])
    if (names.has(e.child) && names.has(e.parent) && e.child !== e.parent)
      parents.set(e.child, (parents.get(e.child) ?? new Set()).add(e.parent));
  // Children first: a table is placed once every table that references it is placed.
  const order: string[] = [];
  const left = new Set(names);
  while (left.size) {
    const ready = [...left].filter((t) => ![...left].some((other) => parents.get(other)?.has(t)));
    const next = ready.length ? ready : [...left];
    for (const t of next.sort()) {
      order.push(t);
      left.delete(t);
    }
  }
  return order;
}

/** Columns whose names say they hold a secret or its hash: never exported. */
export const SECRET_COLUMN = /(hash|sealed|secret|password|private_key|token)/;

/** Columns named `*blob_key` of `table`: where its rows point into the blob store. */
export async function blobColumns(db: Knex, table: string): Promise<string[]> {
  const { rows } = await db.raw(
    `select column_name as name from information_schema.columns
     where table_schema = current_schema() and table_name = ? and column_name like '%blob_key' order by 1`,
    [table],
  );
  return (rows as { name: string }[]).map((r) => r.name);
}

export async function columnsOf(db: Knex, table: string): Promise<string[]> {
  const { rows } = await db.raw(
    `select column_name as name from information_schema.columns
     where table_schema = current_schema() and table_name = ? order by ordinal_position`,
    [table],
  );
  return (rows as { name: string }[]).map((r) => r.name);
}
