import type { Knex } from 'knex';

// Contacts: one row per address per team. `email` is kept as given but for its domain (lower case, IDNA in its
// ASCII form: shared/contacts/address.ts); an address is unique per team without regard to case, as topic choices
// and suppressions match addresses (their `email` is the lower-cased address), so one person has one contact and one
// set of choices. Local parts are ASCII (the send path refuses others), so lower() here and toLowerCase() there
// agree. `properties` holds the values of the team's contact properties, keyed by property key.
// No foreign key to the team: imports and sign-up forms write contacts in bulk, and the check would lock the one
// team row per row written (see 20261123020000_hot_rows_without_foreign_keys). A team's deletion (not built yet)
// must delete its contacts itself; their segment memberships follow by cascade.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('contacts', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable();
    t.text('email').notNullable();
    t.text('first_name').nullable();
    t.text('last_name').nullable();
    t.boolean('unsubscribed').notNullable().defaultTo(false);
    t.jsonb('properties').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // Lists page by id within a team.
    t.index(['team_id', 'id']);
  });
  await knex.raw('create unique index contacts_team_email_unique on contacts (team_id, lower(email))');
  await knex.raw(`alter table contacts
    add constraint contacts_email_length check (char_length(email) between 3 and 320),
    add constraint contacts_properties_object check (jsonb_typeof(properties) = 'object')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('contacts');
}
