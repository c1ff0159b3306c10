import type { Knex } from 'knex';

// When the recipient complained (an RFC 5965 feedback report reached our MX): a second report about the same
// recipient, or the same report processed again, records no second email.complained.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('email_recipients', (t) => {
    t.timestamp('complained_at', { useTz: true }).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('email_recipients', (t) => {
    t.dropColumn('complained_at');
  });
}
