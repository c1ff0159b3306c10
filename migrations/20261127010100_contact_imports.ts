import type { Knex } from 'knex';

// Contact imports (interface spec, Contact imports). One row per accepted upload: the file as a blob (`blob_key`,
// null once the worker's maintenance deleted it, seven days after `completed_at`), what the request asked
// (`column_map` as resolved against the file's header, `on_conflict`, `segment_ids`, `topics`), and the progress
// the worker commits with every batch: `row_offset` (data rows of the file done, in file order) moves in the same
// transaction as the contacts and the counts, so a run that resumes after a crash skips exactly what was committed
// and nothing is created or counted twice. `total` is the number of data rows the api counted while storing the
// file. The first 1,000 failed rows are kept in contact_import_failures (row = the row's number in the file, the
// header being row 1). `error` says why an import as a whole `failed`.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('contact_imports', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('status').notNullable().defaultTo('queued').checkIn(['queued', 'in_progress', 'completed', 'failed']);
    // Who uploaded it: an API key, or a user signed in to the dashboard.
    t.text('api_key_id').nullable();
    t.uuid('user_id').nullable();
    t.text('blob_key').nullable();
    t.bigInteger('file_bytes').notNullable();
    t.jsonb('columns').notNullable();
    t.jsonb('column_map').notNullable();
    t.text('on_conflict').notNullable().checkIn(['upsert', 'skip']);
    t.specificType('segment_ids', 'uuid[]').notNullable().defaultTo('{}');
    t.jsonb('topics').notNullable().defaultTo('[]');
    t.integer('row_offset').notNullable().defaultTo(0);
    t.integer('total').notNullable().defaultTo(0);
    t.integer('created').notNullable().defaultTo(0);
    t.integer('updated').notNullable().defaultTo(0);
    t.integer('skipped').notNullable().defaultTo(0);
    t.integer('failed').notNullable().defaultTo(0);
    t.text('error').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('started_at', { useTz: true }).nullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('completed_at', { useTz: true }).nullable();
    t.timestamp('file_deleted_at', { useTz: true }).nullable();
    // Lists page by id within a team, optionally by status.
    t.index(['team_id', 'id']);
    t.index(['team_id', 'status', 'id']);
  });
  // The worker's sweeps: unfinished imports (re-enqueued after a lost enqueue), uploads due for deletion.
  await knex.raw(`create index contact_imports_unfinished on contact_imports (created_at)
    where status in ('queued', 'in_progress')`);
  await knex.raw(`create index contact_imports_uploads on contact_imports (completed_at) where blob_key is not null`);
  await knex.schema.createTable('contact_import_failures', (t) => {
    t.uuid('import_id').notNullable().references('contact_imports.id').onDelete('CASCADE');
    t.integer('row').notNullable();
    t.text('email').nullable();
    t.text('reason').notNullable();
    t.primary(['import_id', 'row']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('contact_import_failures');
  await knex.schema.dropTable('contact_imports');
}
