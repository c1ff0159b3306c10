import type { Knex } from 'knex';

// A message submitted over SMTP is delivered exactly as submitted, so its bytes are kept until every recipient is
// done. Up to RAW_INLINE_MAX_BYTES (shared/emails/persist.ts) they now live in this table, written by the accept
// statement itself, instead of a blob: a durable blob write is nine filesystem operations, two fsyncs and a
// directory per email (~1.1 ms of the mta's CPU per message, measured), and the deliver job read it back with four
// more; here it rides the commit the send needs anyway and comes back with the job's claim. Its own table, not a
// column of emails, so that reading an email (GET /emails, the lists) never reads the message. Larger messages
// still go to the blob store (emails.raw_blob_key).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('email_raw', (t) => {
    t.uuid('email_id').primary().references('id').inTable('emails').onDelete('CASCADE');
    // No foreign key to teams, as the other per-send tables (20261123020000).
    t.uuid('team_id').notNullable();
    t.binary('bytes').notNullable();
  });
  await knex.raw(`DO $$ BEGIN
    EXECUTE 'ALTER TABLE email_raw ALTER COLUMN bytes SET COMPRESSION lz4';
  EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 not supported by this server: keeping the default compression';
  END $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('email_raw');
}
