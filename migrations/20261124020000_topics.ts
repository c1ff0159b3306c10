import type { Knex } from 'knex';

// Topics: what a team's contacts subscribe to, and the list its preference page shows. A topic is written by
// hand, never per send, so it keeps its foreign key to the team (the hot-row concern of
// 20261123020000_hot_rows_without_foreign_keys does not apply). `default_subscription` is fixed at creation.
// Lengths are counted as the api counts them (UTF-16 code units), which never exceeds PostgreSQL's character
// count, so a row the api accepts always passes these checks.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('topics', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('description').nullable();
    t.text('default_subscription').notNullable().checkIn(['opt_in', 'opt_out']);
    t.text('visibility').notNullable().defaultTo('private').checkIn(['public', 'private']);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // Lists page by id (UUID v7, so creation order) within a team: shared/pagination.ts paginate().
    t.index(['team_id', 'id']);
  });
  await knex.raw(`alter table topics
    add constraint topics_name_length check (char_length(name) between 1 and 50),
    add constraint topics_description_length check (description is null or char_length(description) <= 200)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('topics');
}
