import type { Knex } from 'knex';

// A message the MX accepts, up to RAW_INLINE_MAX_BYTES, is kept here by the statement that stores its row, until the
// receive job has processed it: then the job writes it to the blob store (received_messages.raw_blob_key names where)
// and deletes it here, in the transaction that marks the message processed. Before the 250 the MX then pays one
// commit (shared with the concurrent sessions' by group commit) instead of a blob's file operations and fsyncs as
// well (the submissions' email_raw, 20261124010000, did the same for the mta). Larger messages still go to the blob
// store before the 250. Everything after the receive job (the API, downloads, retention) reads the blob as before.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('received_raw', (t) => {
    t.uuid('message_id').primary().references('id').inTable('received_messages').onDelete('CASCADE');
    // No foreign key to teams: the message's row has it, and its deletion cascades here.
    t.uuid('team_id').notNullable();
    t.binary('bytes').notNullable();
  });
  await knex.raw(`DO $$ BEGIN
    EXECUTE 'ALTER TABLE received_raw ALTER COLUMN bytes SET COMPRESSION lz4';
  EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 not supported by this server: keeping the default compression';
  END $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('received_raw');
}
