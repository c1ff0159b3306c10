import type { Knex } from 'knex';

// Sending: an email (the message as accepted, composed once), its recipients (one delivery state each), its
// attachments (bytes in the blob store), and every delivery attempt with its SMTP transcript.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('emails', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.uuid('domain_id').nullable().references('domains.id').onDelete('SET NULL');
    t.uuid('api_key_id').nullable();
    t.text('source').notNullable().checkIn(['api', 'smtp', 'broadcast']);
    t.text('from').notNullable();
    t.text('from_address').notNullable();
    t.specificType('to', 'text[]').notNullable();
    t.specificType('cc', 'text[]').notNullable().defaultTo('{}');
    t.specificType('bcc', 'text[]').notNullable().defaultTo('{}');
    t.specificType('reply_to', 'text[]').notNullable().defaultTo('{}');
    t.text('subject').notNullable().defaultTo('');
    t.text('html').nullable();
    t.text('text').nullable();
    t.jsonb('headers').notNullable().defaultTo('{}');
    t.jsonb('tags').notNullable().defaultTo('[]');
    t.uuid('topic_id').nullable();
    t.text('message_id').notNullable();
    // queued → sending (handed to the MTA) → done; scheduled waits for scheduled_at; canceled before release
    t.text('status').notNullable().checkIn(['scheduled', 'queued', 'sending', 'done', 'canceled']);
    t.text('last_event').notNullable();
    t.timestamp('scheduled_at', { useTz: true }).nullable();
    // The MIME message as submitted over SMTP, or as composed by the MTA (composed once, signed per attempt).
    t.text('raw_blob_key').nullable();
    t.integer('size_bytes').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['team_id', 'id']);
    t.index(['status', 'scheduled_at']);
  });

  await knex.schema.createTable('email_recipients', (t) => {
    t.uuid('id').primary();
    t.uuid('email_id').notNullable().references('emails.id').onDelete('CASCADE');
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('address').notNullable();
    t.text('domain').notNullable();
    t.text('kind').notNullable().checkIn(['to', 'cc', 'bcc']);
    t.text('status')
      .notNullable()
      .checkIn(['queued', 'deferred', 'delivered', 'bounced', 'suppressed', 'failed', 'canceled']);
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamp('next_attempt_at', { useTz: true }).nullable();
    t.timestamp('first_deferred_at', { useTz: true }).nullable();
    t.boolean('delay_notified').notNullable().defaultTo(false);
    // A delivery in progress holds the recipient until leased_until: two MTA copies never send it at once.
    t.timestamp('leased_until', { useTz: true }).nullable();
    t.text('last_response').nullable();
    t.text('enhanced_code').nullable();
    t.text('bounce_type').nullable();
    t.text('bounce_sub_type').nullable();
    t.text('mx_host').nullable();
    t.timestamp('delivered_at', { useTz: true }).nullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['email_id', 'address']);
    t.index(['status', 'next_attempt_at']);
  });

  await knex.schema.createTable('email_attachments', (t) => {
    t.uuid('id').primary();
    t.uuid('email_id').notNullable().references('emails.id').onDelete('CASCADE');
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.text('filename').nullable();
    t.text('content_type').notNullable();
    t.text('content_id').nullable();
    t.text('content_disposition').notNullable().checkIn(['attachment', 'inline']);
    t.integer('size').notNullable();
    t.text('blob_key').notNullable();
    t.index(['email_id', 'position']);
  });

  await knex.schema.createTable('delivery_attempts', (t) => {
    t.uuid('id').primary();
    t.uuid('email_id').notNullable().references('emails.id').onDelete('CASCADE');
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('domain').notNullable();
    t.specificType('recipients', 'text[]').notNullable();
    t.text('mx_host').nullable();
    t.text('outcome').notNullable().checkIn(['delivered', 'deferred', 'bounced', 'partial']);
    t.text('response').nullable();
    t.text('transcript').nullable();
    t.boolean('tls').notNullable().defaultTo(false);
    t.integer('duration_ms').notNullable();
    t.timestamp('started_at', { useTz: true }).notNullable();
    t.index(['email_id', 'id']);
  });

  // Rows the bulk rule counts: the same message (by content hash) without an unsubscribe link, per team per day.
  await knex.schema.createTable('bulk_counters', (t) => {
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.date('day').notNullable();
    t.text('content_hash').notNullable();
    t.integer('recipients').notNullable().defaultTo(0);
    t.primary(['team_id', 'day', 'content_hash']);
  });

  await knex.schema.alterTable('teams', (t) => {
    // null = no limit; the operator sets them (plans and billing come later)
    t.integer('daily_send_limit').nullable();
    t.integer('monthly_send_limit').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('teams', (t) => {
    t.dropColumn('daily_send_limit');
    t.dropColumn('monthly_send_limit');
  });
  for (const table of ['bulk_counters', 'delivery_attempts', 'email_attachments', 'email_recipients', 'emails']) {
    await knex.schema.dropTable(table);
  }
}
