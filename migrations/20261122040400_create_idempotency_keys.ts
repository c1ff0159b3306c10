import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('idempotency_keys', (t) => {
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('key').notNullable();
    t.text('request_hash').notNullable();
    t.text('status').notNullable().checkIn(['in_flight', 'done']);
    t.integer('response_status').nullable();
    t.jsonb('response_body').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['team_id', 'key']);
    t.index(['created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('idempotency_keys');
}
