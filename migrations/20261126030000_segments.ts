import type { Knex } from 'knex';

// Segments: named groups of a team's contacts (the SDK's older "audiences" are the same rows). Members are added
// by hand (contact_segments, 20261126040000); filters are not built yet. Written by hand: keeps its foreign key to
// the team.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('segments', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['team_id', 'id']);
  });
  await knex.raw(
    'alter table segments add constraint segments_name_length check (char_length(name) between 1 and 100)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('segments');
}
