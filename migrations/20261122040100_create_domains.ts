import type { Knex } from 'knex';

// The core of a domain row; the domains area adds its records, keys and verification state in later migrations.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('domains', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('status').notNullable().defaultTo('not_started');
    t.text('region').notNullable().defaultTo('us-east-1');
    t.boolean('managed').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['team_id', 'name']);
    t.index(['team_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('domains');
}
