import type { Knex } from 'knex';

// Suppressions: the addresses a team will not send to. One row per team and address (stored normalised:
// trimmed and lower case), so a lookup on the send path is one index probe. `source_id` names what caused it
// (the email that bounced or drew the complaint); no foreign key, the suppression outlives that email.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('suppressions', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('email').notNullable();
    t.text('origin').notNullable().checkIn(['bounce', 'complaint', 'manual', 'unsubscribe']);
    t.uuid('source_id').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['team_id', 'email']);
    // Lists page by id within a team.
    t.index(['team_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('suppressions');
}
