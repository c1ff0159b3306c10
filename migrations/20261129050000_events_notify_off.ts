import type { Knex } from 'knex';

// The NOTIFY trigger of 20261122103000 goes: a NOTIFY takes PostgreSQL's cluster-wide notify lock at commit and holds
// it through the commit's WAL flush, so every transaction that wrote an event (each accepted email, each delivery
// record, each open and click) waited on the one before. The worker finds new events by an index probe every
// 20 ms instead (worker/webhooks.ts).
export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS events_notify ON events');
  await knex.raw('DROP FUNCTION IF EXISTS events_notify()');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`CREATE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_notify('events', ''); RETURN NULL; END $$`);
  await knex.raw(
    'CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION events_notify()',
  );
}
