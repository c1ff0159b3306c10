import type { Knex } from 'knex';

// The highest number of billable contacts a team had in a period (a calendar month in UTC, `period_start` its
// first day): overage is billed on the period's peak (interface spec, Limits: Contacts). Raised, never lowered, each
// time the count is taken (shared/contacts/billable.ts).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('team_contact_peaks', (t) => {
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.date('period_start').notNullable();
    t.integer('peak').notNullable().defaultTo(0);
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['team_id', 'period_start']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('team_contact_peaks');
}
