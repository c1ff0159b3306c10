import type { Knex } from 'knex';

// A message the MX accepts, up to RAW_INLINE_MAX_BYTES, is kept here by the statement that stores its row, and
// its row's raw_blob_key is null: before the 250 the MX pays one commit (shared with the concurrent sessions' by
// group commit) instead of a blob's file operations and fsyncs as well, and the receive job reads the bytes back
// from here rather than from a file (the submissions' email_raw, 20261124010000, did the same for the mta).
// Larger messages still go to the blob store before the 250. Readers: shared/receiving/raw.ts.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('received_raw', (t) => {
    t.uuid('message_id').primary().references('id').inTable('received_messages').onDelete('CASCADE');
    // No foreign key to teams: the message's row has it, and its deletion cascades here.
    t.uuid('team_id').notNullable();
    t.binary('bytes').notNullable();
  });
  await knex.raw('alter table received_messages alter column raw_blob_key drop not null');
  await knex.raw(`DO $$ BEGIN
    EXECUTE 'ALTER TABLE received_raw ALTER COLUMN bytes SET COMPRESSION lz4';
  EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 not supported by this server: keeping the default compression';
  END $$`);
}

export async function down(knex: Knex): Promise<void> {
  // Messages whose bytes are only here cannot keep a not-null blob key: down loses them (development only).
  await knex('received_messages').whereNull('raw_blob_key').delete();
  await knex.raw('alter table received_messages alter column raw_blob_key set not null');
  await knex.schema.dropTable('received_raw');
}
