// The worker warns at start when the PostgreSQL server runs without autovacuum (shared/db/autovacuum.ts), and then
// analyzes the tables that changed as autovacuum would. The server's own setting decides the warning; the CI
// machine's server runs with autovacuum off, so there the warning is what is tested. The analyze is tested on any.
import test from 'ava';
import knexFactory from 'knex';
import pino from 'pino';
import { adminUrl, createTestDatabase } from './helpers/db.ts';
import { analyzeChangedTables, warnIfAutovacuumOff } from '../shared/db/autovacuum.ts';

test('a warning names the setting exactly when the server runs without autovacuum', async (t) => {
  const db = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  t.teardown(() => db.destroy());
  const lines: { msg: string; docs?: string }[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  await warnIfAutovacuumOff(db, log);
  const settings = (
    await db.raw(`select current_setting('autovacuum') as autovacuum, current_setting('track_counts') as counts`)
  ).rows[0];
  const off = settings.autovacuum !== 'on' || settings.counts !== 'on';
  t.deepEqual(
    lines.map((l) => l.msg),
    off ? ['postgres.autovacuum_off'] : [],
  );
  if (off) t.is(lines[0].docs, 'docs/capacity.md');
});

test("the tables changed by more than autovacuum's threshold since their last analyze are analyzed, once", async (t) => {
  const database = await createTestDatabase();
  const db = knexFactory({ client: 'pg', connection: database.url, pool: { min: 1, max: 1 } });
  t.teardown(async () => {
    await db.destroy();
    await database.drop();
  });
  await db.raw('create table pw_analyze_many (n integer); create table pw_analyze_few (n integer)');
  await db.raw('insert into pw_analyze_many select generate_series(1, 500); insert into pw_analyze_few values (1)');
  // The counters reach the statistics a second after at most; this makes it now (one connection: ours).
  await db.raw('select pg_stat_force_next_flush()');
  const lastAnalyze = async (table: string) =>
    (await db.raw('select last_analyze from pg_stat_user_tables where relname = ?', [table])).rows[0].last_analyze;
  const first = await analyzeChangedTables(db);
  t.true(first.includes('pw_analyze_many'), first.join(', '));
  t.false(first.includes('pw_analyze_few'), 'one row changed: under the 50 rows autovacuum waits for');
  t.truthy(await lastAnalyze('pw_analyze_many'));
  t.is(await lastAnalyze('pw_analyze_few'), null);
  await db.raw('select pg_stat_force_next_flush()');
  t.false((await analyzeChangedTables(db)).includes('pw_analyze_many'), 'nothing changed since: not again');
});
