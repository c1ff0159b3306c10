import type { Knex } from 'knex';

// Receiving: a message the MX accepted (its raw bytes in the blob store, one row per team it was accepted for),
// the received email the receive job reads out of it, and that email's attachments (bytes in the blob store).
// A received email shares its id with its message row: the id space of received mail, never an `emails` id.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('received_messages', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    // The domain of the first accepted recipient; null for a bounce (the email's domain may be gone).
    t.uuid('domain_id').nullable().references('domains.id').onDelete('SET NULL');
    t.text('raw_blob_key').notNullable();
    t.integer('size').notNullable();
    t.text('envelope_from').notNullable().defaultTo('');
    // The team's accepted recipients (RCPT TO), the received email's `received_for`.
    t.specificType('rcpt_to', 'text[]').notNullable();
    t.text('remote_ip').notNullable().defaultTo('');
    t.text('helo').notNullable().defaultTo('');
    t.boolean('tls').notNullable().defaultTo(false);
    // stored: durable, 250 given, not yet processed; processed: the receive job is done with it.
    t.text('status').notNullable().defaultTo('stored').checkIn(['stored', 'processed']);
    // mail: to a receiving domain; bounce: to a return-path address (a DSN or ARF report about our email).
    t.text('kind').notNullable().checkIn(['mail', 'bounce']);
    // For a bounce: the email its return-path address names.
    t.uuid('email_id').nullable();
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['team_id', 'id']);
  });
  // The sweep's query: what a crash left unprocessed.
  await knex.raw(`create index received_messages_stored on received_messages (received_at) where status = 'stored'`);

  await knex.schema.createTable('received_emails', (t) => {
    t.uuid('id').primary().references('received_messages.id').onDelete('CASCADE');
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('from').notNullable().defaultTo('');
    t.specificType('to', 'text[]').notNullable().defaultTo('{}');
    t.specificType('cc', 'text[]').notNullable().defaultTo('{}');
    t.specificType('bcc', 'text[]').notNullable().defaultTo('{}');
    t.specificType('reply_to', 'text[]').notNullable().defaultTo('{}');
    t.text('subject').notNullable().defaultTo('');
    t.text('message_id').notNullable().defaultTo('');
    t.text('html').nullable();
    t.text('text').nullable();
    // The header block in order, as [name, value] pairs (unfolded, undecoded): lossless; the API shapes it.
    t.jsonb('headers').notNullable().defaultTo('[]');
    t.text('dropped_reason')
      .nullable()
      .checkIn(['daily_cap', 'storage_quota', 'virus', 'parse_failed', 'no_mailbox', 'team_blocked']);
    // When the message was received (the MX's 250), not when it was processed.
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['team_id', 'id']);
  });

  await knex.schema.createTable('received_attachments', (t) => {
    t.uuid('id').primary();
    t.uuid('email_id').notNullable().references('received_emails.id').onDelete('CASCADE');
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.text('filename').nullable();
    t.text('content_type').notNullable();
    t.text('content_disposition').notNullable().checkIn(['attachment', 'inline']);
    t.text('content_id').nullable();
    t.integer('size').notNullable();
    t.text('blob_key').notNullable();
    t.unique(['email_id', 'position']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('received_attachments');
  await knex.schema.dropTable('received_emails');
  await knex.schema.dropTable('received_messages');
}
