import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('teams', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable();
    t.text('slug').notNullable().unique();
    t.text('status').notNullable().defaultTo('active').checkIn(['active', 'suspended']);
    t.text('plan').notNullable().defaultTo('free');
    // null = the platform default (RATE_LIMIT_RPS)
    t.integer('rate_limit_rps').nullable();
    t.specificType('sandbox_regions', 'text[]')
      .notNullable()
      .defaultTo(knex.raw("'{us-east-1,eu-west-1,sa-east-1,ap-northeast-1}'::text[]"));
    t.timestamp('suspended_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('teams');
}
