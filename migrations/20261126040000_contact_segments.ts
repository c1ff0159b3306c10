import type { Knex } from 'knex';

// A contact's membership of a segment, added by hand. Deleting either side deletes the membership. The primary
// key serves a segment's contacts (paged by contact id); the second index a contact's segments. `team_id` scopes
// the rows like every other table's, without a foreign key (the contact's and the segment's carry the team).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('contact_segments', (t) => {
    t.uuid('segment_id').notNullable().references('segments.id').onDelete('CASCADE');
    t.uuid('contact_id').notNullable().references('contacts.id').onDelete('CASCADE');
    t.uuid('team_id').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['segment_id', 'contact_id']);
    t.index(['contact_id', 'segment_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('contact_segments');
}
