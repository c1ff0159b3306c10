import type { Knex } from 'knex';

// Contact properties: the typed custom fields a team's contacts may carry. A contact stores its values in its own
// `properties` (jsonb, keyed by the property's key: 20261126020000_contacts), so `key` and `type` are fixed once
// created; deleting a property removes its values from every contact in the same transaction. `fallback_value`
// (a JSON value of the property's type, or null) is what a template shows for a contact with no value. Written by
// hand, never per send: it keeps its foreign key to the team.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('contact_properties', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('key').notNullable();
    t.text('type').notNullable().checkIn(['string', 'number', 'boolean']);
    t.jsonb('fallback_value').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['team_id', 'key']);
    // Lists page by id (UUID v7, so creation order) within a team: shared/pagination.ts paginate().
    t.index(['team_id', 'id']);
  });
  await knex.raw(
    `alter table contact_properties add constraint contact_properties_key_format check (key ~ '^[A-Za-z0-9_]{1,50}$' and key <> '__proto__')`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('contact_properties');
}
