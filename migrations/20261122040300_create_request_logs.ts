import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('request_logs', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.uuid('api_key_id').nullable();
    t.text('method').notNullable();
    t.text('endpoint').notNullable();
    t.integer('response_status').notNullable();
    t.text('user_agent').nullable();
    t.integer('duration_ms').notNullable();
    t.jsonb('request_body').nullable();
    t.jsonb('response_body').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['team_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('request_logs');
}
