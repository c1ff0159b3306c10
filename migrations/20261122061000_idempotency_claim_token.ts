import type { Knex } from 'knex';

// Each claim of an idempotency key carries a token, so a request whose claim was taken over (it looked
// abandoned) can no longer store or release the key that now belongs to the retry.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.text('claim_token').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.dropColumn('claim_token');
  });
}
