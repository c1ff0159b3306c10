import type { Knex } from 'knex';

// A team's contact allowance (interface spec, Limits: Contacts): `contacts_included` billable contacts, 0 meaning
// unlimited. Plans are not built: the operator sets it (`cli team set-contacts-included`); past it new contacts
// are refused, through the API and in imports alike (shared/contacts/allowance.ts).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('teams', (t) => {
    t.integer('contacts_included').notNullable().defaultTo(0);
  });
  await knex.raw('alter table teams add constraint teams_contacts_included_range check (contacts_included >= 0)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('teams', (t) => {
    t.dropColumn('contacts_included');
  });
}
