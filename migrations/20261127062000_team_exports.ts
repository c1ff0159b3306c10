import type { Knex } from 'knex';

// A team's export: the worker builds a zip (a JSON file per area, manifest.json) into the blob store; the archive
// is deleted 7 days after it is ready (status expired).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('team_exports', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.uuid('requested_by').nullable().references('users.id').onDelete('SET NULL');
    t.text('status')
      .notNullable()
      .defaultTo('pending')
      .checkIn(['pending', 'running', 'completed', 'failed', 'expired']);
    t.text('blob_key').nullable();
    t.bigInteger('bytes').nullable();
    t.boolean('truncated').notNullable().defaultTo(false);
    t.text('error').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('started_at', { useTz: true }).nullable();
    t.timestamp('completed_at', { useTz: true }).nullable();
    t.timestamp('expires_at', { useTz: true }).nullable();
    t.index(['team_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('team_exports');
}
