import type { Knex } from 'knex';

// Prompt, exact fan-out (the transactional outbox's ordering): every event carries the id of the transaction that
// inserted it (`xid`, a database default, so no insert names it). An event is fanned out once its xid is below
// the oldest transaction still running: every transaction with a smaller xid has then ended, so no event can
// still appear behind the cursor, which now walks (xid, id). The 1-second settle window on UUID v7 ids goes.
//
// A NOTIFY on the `events` channel at each inserting statement wakes the worker when the transaction commits
// (PostgreSQL delivers notifications at commit, and only then), so fan-out does not wait for a poll.
export async function up(knex: Knex): Promise<void> {
  // Added nullable, then given its default: no table rewrite. Rows from before stay NULL except those the
  // fan-out has not reached yet, which get the smallest xid there is so they go first. (ALTER TABLE waits for
  // every transaction writing `events`, so all NULL rows are committed.)
  await knex.raw('ALTER TABLE events ADD COLUMN xid xid8');
  await knex.raw('ALTER TABLE events ALTER COLUMN xid SET DEFAULT pg_current_xact_id()');
  await knex.raw(`UPDATE events SET xid = '1'::xid8
    WHERE id > coalesce((SELECT last_event_id FROM webhook_fanout_cursor WHERE id = 1), '00000000-0000-0000-0000-000000000000')`);
  await knex.raw('CREATE INDEX events_xid_id ON events (xid, id) WHERE xid IS NOT NULL');
  await knex.raw("ALTER TABLE webhook_fanout_cursor ADD COLUMN last_xid xid8 NOT NULL DEFAULT '0'");
  await knex.raw("UPDATE webhook_fanout_cursor SET last_event_id = '00000000-0000-0000-0000-000000000000'");

  await knex.raw(`CREATE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_notify('events', ''); RETURN NULL; END $$`);
  await knex.raw(
    'CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION events_notify()',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER events_notify ON events');
  await knex.raw('DROP FUNCTION events_notify()');
  await knex.raw('ALTER TABLE webhook_fanout_cursor DROP COLUMN last_xid');
  await knex.raw('DROP INDEX events_xid_id');
  await knex.raw('ALTER TABLE events DROP COLUMN xid');
}
