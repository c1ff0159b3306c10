import type { Knex } from 'knex';

// The broadcast an email was sent for (null for every other send): what the broadcast's reports and the `broadcast`
// dimension of GET /emails/metrics read. No foreign key, as on the other hot rows (20261123020000).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('emails', (t) => {
    t.uuid('broadcast_id').nullable();
  });
  await knex.raw('create index emails_by_broadcast on emails (broadcast_id) where broadcast_id is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('emails', (t) => {
    t.dropColumn('broadcast_id');
  });
}
