import type { Knex } from 'knex';

// The audit log: who did what to a team's data, one row per action worth answering for later (a contact import,
// and whatever later areas record: shared/audit/audit.ts). Append-only; rows are never updated. `actor_type` says
// who acted (`api_key` with the key's id, `user` with the user's id for a dashboard session, `operator` for the CLI,
// `system` for the platform itself); `action` is a
// stable dotted name (`contacts.imported`); `subject_type`/`subject_id` name the row acted on; `data` is what the
// action did, as JSON. No foreign key to the team: a team's deletion (not built yet) decides what happens to its
// trail, and an audit row must never block it.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('audit_log', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable();
    t.text('actor_type').notNullable().checkIn(['api_key', 'user', 'operator', 'system']);
    t.text('actor_id').nullable();
    t.text('action').notNullable();
    t.text('subject_type').nullable();
    t.text('subject_id').nullable();
    t.jsonb('data').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // A team's trail, newest first (ids are UUID v7).
    t.index(['team_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('audit_log');
}
