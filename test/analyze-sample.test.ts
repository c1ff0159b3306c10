// The tables written per message keep a statistics target of 30 on every column and index expression
// (migrations/20261202180000): ANALYZE's sample is 300 × the largest target, so one column left at the default
// (100, a column added later) would bring back the 30,000-row sample that cost a core for a second beside a
// broadcast. And the target is the one ANALYZE uses: a histogram of at most 31 bounds.
import test from 'ava';
import knexFactory from 'knex';
import { createTestDatabase } from './helpers/db.ts';

const TABLES = ['emails', 'email_recipients', 'events', 'delivery_attempts'];

test('every column and index expression of the per-message tables has a statistics target of 30', async (t) => {
  const database = await createTestDatabase();
  const db = knexFactory({ client: 'pg', connection: database.url, pool: { min: 1, max: 1 } });
  t.teardown(async () => {
    await db.destroy();
    await database.drop();
  });
  for (const table of TABLES) {
    const { rows } = await db.raw(
      `select a.attname as name, coalesce(a.attstattarget, -1)::int as target
         from pg_attribute a
        where a.attnum > 0 and not a.attisdropped and (a.attrelid = ?::regclass
           or a.attrelid in (select indexrelid from pg_index i where i.indrelid = ?::regclass
                               and i.indkey[a.attnum - 1] = 0))`,
      [table, table],
    );
    t.true(rows.length > 3, `${table} has its columns`);
    t.deepEqual(
      rows.filter((r: { target: number }) => r.target !== 30).map((r: { name: string }) => r.name),
      [],
      `${table}: every column at 30`,
    );
  }
  // events' (team_id, data->>'email_id', created_at) index: its expression is one of those counted above.
  const { rows: expressions } = await db.raw(
    `select count(*)::int as n from pg_index where indrelid = 'events'::regclass and indexprs is not null`,
  );
  t.true(expressions[0].n >= 1);

  await db.raw(`insert into events (id, team_id, type, data, created_at, xid)
    select gen_random_uuid(), gen_random_uuid(), 'email.sent', '{}'::jsonb, now() - g * interval '1 second',
           pg_current_xact_id() from generate_series(1, 20000) g`);
  await db.raw('analyze events');
  const { rows: stats } = await db.raw(
    `select array_length(histogram_bounds::text::text[], 1) as bounds from pg_stats
      where tablename = 'events' and attname = 'created_at'`,
  );
  t.true(stats[0].bounds > 1 && stats[0].bounds <= 31, `created_at's histogram: ${stats[0].bounds} bounds`);
});
