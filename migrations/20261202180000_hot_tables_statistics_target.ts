import type { Knex } from 'knex';

// ANALYZE reads a sample of 300 × the largest statistics target among a table's columns and index expressions:
// 30,000 rows, most on pages of their own, at the default target of 100. On `emails` (a broadcast turns a hundred
// thousand rows over within minutes, and autovacuum, or the worker where autovacuum is off, analyzes it each
// minute) that sample was a whole core for about a second each time (1.05 s on 200,000 rows, against 0.30 s at a
// target of 30), taken from the api's accepts beside it (bench/README.md, the broadcasts suite). These tables are
// written once or twice per message and read by keys (ids, a team and a time, a status); 9,000 rows estimate them
// as well. The tables' columns added later must be set the same way (`test/analyze-sample.test.ts` says so).
const HOT_TABLES = ['emails', 'email_recipients', 'events', 'delivery_attempts'];
const STATISTICS_TARGET = 30;

async function setTarget(knex: Knex, target: number): Promise<void> {
  for (const table of HOT_TABLES) {
    const { rows } = await knex.raw<{ rows: { name: string }[] }>(
      `select attname as name from pg_attribute where attrelid = ?::regclass and attnum > 0 and not attisdropped`,
      [table],
    );
    const columns = rows.map(() => 'alter column ?? set statistics ' + String(target)).join(', ');
    await knex.raw(`alter table ?? ${columns}`, [table, ...rows.map((r) => r.name)]);
    // An index's expression columns have a target of their own, and count toward the sample the same way.
    const { rows: expressions } = await knex.raw<{ rows: { index: string; position: number }[] }>(
      `select c.relname as index, a.attnum as position from pg_index i
         join pg_class c on c.oid = i.indexrelid
         join pg_attribute a on a.attrelid = i.indexrelid and a.attnum > 0
        where i.indrelid = ?::regclass and i.indkey[a.attnum - 1] = 0`,
      [table],
    );
    for (const e of expressions)
      await knex.raw(`alter index ?? alter column ${Number(e.position)} set statistics ${target}`, [e.index]);
  }
}

export async function up(knex: Knex): Promise<void> {
  await setTarget(knex, STATISTICS_TARGET);
}

export async function down(knex: Knex): Promise<void> {
  await setTarget(knex, -1);
}
