// PostgreSQL's autovacuum keeps the hot tables (email_recipients, emails, events) from growing dead rows and keeps
// the planner's statistics current as a broadcast turns a hundred thousand rows pending at once. Where an operator
// turned it off, nothing else does that: the worker says so once at start (docs/capacity.md).
import type { Knex } from 'knex';
import type { Logger } from '../logger.ts';

/** Whether the server runs autovacuum (`autovacuum` and the statistics it needs, `track_counts`). */
export async function autovacuumOn(db: Knex): Promise<boolean> {
  const { rows } = await db.raw<{ rows: { name: string; setting: string }[] }>(
    `select name, setting from pg_settings where name in ('autovacuum', 'track_counts')`,
  );
  return rows.length === 2 && rows.every((r) => r.setting === 'on');
}

export async function warnIfAutovacuumOff(db: Knex, log: Logger): Promise<void> {
  if (await autovacuumOn(db)) return;
  log.warn(
    {
      hint: 'PostgreSQL runs without autovacuum (or track_counts): dead rows of the hot tables and stale statistics slow delivery until a VACUUM ANALYZE; turn it on',
      docs: 'docs/capacity.md',
    },
    'postgres.autovacuum_off',
  );
}
