// PostgreSQL's autovacuum keeps the hot tables (email_recipients, emails, events) from growing dead rows and keeps
// the planner's statistics current as a broadcast turns a hundred thousand rows pending at once. Where an operator
// turned it off, the worker says so once at start (docs/capacity.md) and does the part plans depend on itself: the
// analyze of the tables that changed (analyzeChangedTables), once a minute, as autovacuum would. Vacuuming stays
// the operator's (it takes locks and I/O an operator who turned autovacuum off chose to schedule).
import type { Knex } from 'knex';
import type { Logger } from '../logger.ts';

/** Whether the server runs autovacuum (`autovacuum` and the statistics it needs, `track_counts`). */
export async function autovacuumOn(db: Knex): Promise<boolean> {
  const { rows } = await db.raw<{ rows: { name: string; setting: string }[] }>(
    `select name, setting from pg_settings where name in ('autovacuum', 'track_counts')`,
  );
  return rows.length === 2 && rows.every((r) => r.setting === 'on');
}

/** Logs `postgres.autovacuum_off` where the server runs without autovacuum; answers whether it runs with it. */
export async function warnIfAutovacuumOff(db: Knex, log: Logger): Promise<boolean> {
  if (await autovacuumOn(db)) return true;
  log.warn(
    {
      hint: 'PostgreSQL runs without autovacuum (or track_counts): the worker analyzes the tables that changed once a minute, but nothing vacuums their dead rows; turn it on',
      docs: 'docs/capacity.md',
    },
    'postgres.autovacuum_off',
  );
  return false;
}

/** autovacuum's defaults: its naptime, autovacuum_analyze_threshold and autovacuum_analyze_scale_factor. */
export const ANALYZE_EVERY_MS = 60_000;
const ANALYZE_THRESHOLD = 50;
const ANALYZE_SCALE_FACTOR = 0.1;

/**
 * ANALYZE each table of the platform's schema changed since its last analyze by more rows than autovacuum's analyze
 * waits for (50 + 10 % of its rows), as autovacuum does once a minute. Besides the planner's statistics, an ANALYZE
 * makes every connection plan its prepared statements on the table again: without it, a statement planned while a
 * table was small (a seq scan, cheapest then) keeps that plan however large the table grows (a broadcast's
 * email_recipients: a record statement that read every row). Answers the tables analyzed.
 */
export async function analyzeChangedTables(db: Knex): Promise<string[]> {
  const { rows } = await db.raw<{ rows: { name: string }[] }>(
    `select s.relname as name from pg_stat_user_tables s join pg_class c on c.oid = s.relid
     where s.schemaname = current_schema() and s.n_mod_since_analyze > ? + ? * greatest(c.reltuples, 0)
     order by s.relname`,
    [ANALYZE_THRESHOLD, ANALYZE_SCALE_FACTOR],
  );
  for (const { name } of rows) await db.raw('analyze ??', [name]);
  return rows.map((r) => r.name);
}
