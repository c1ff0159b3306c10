import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('api_keys', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('permission').notNullable().checkIn(['full_access', 'sending_access', 'store_access']);
    t.uuid('domain_id').nullable().references('domains.id').onDelete('CASCADE');
    t.text('key_prefix').notNullable();
    // sha256 of the whole token: the token itself is never stored
    t.text('token_hash').notNullable().unique();
    t.text('status').notNullable().defaultTo('active').checkIn(['active', 'revoked']);
    t.text('inbox_access').notNullable().defaultTo('none').checkIn(['none', 'create', 'read', 'write']);
    t.specificType('inbox_channel_ids', 'uuid[]').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_used_at', { useTz: true }).nullable();
    t.uuid('last_used_request_log_id').nullable();
    t.timestamp('revoked_at', { useTz: true }).nullable();
    t.index(['team_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_keys');
}
