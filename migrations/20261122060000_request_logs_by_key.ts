import type { Knex } from 'knex';

// A key's latest use is read from its newest request log (this index), so a request never has to update the
// key's row: under load every request of one key queued on that row's lock.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('request_logs', (t) => {
    t.index(['api_key_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('request_logs', (t) => {
    t.dropIndex(['api_key_id', 'id']);
  });
}
