import type { Knex } from 'knex';

// Broadcasts: one message to a segment (docs/broadcasts.md). A broadcast's row holds its content and its state
// (draft → queued|scheduled → sending → sent, or canceled, failed); the fan-out walks its segment by contact id
// (`cursor`) under a lease (`lease_token`, `leased_until`) in batches, each committed with the cursor and the
// counts. broadcast_recipients is who it reached (or left out as suppressed), each address once: the unique key is
// what makes a batch run again after a crash add nobody twice.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('broadcasts', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('name').nullable();
    // No foreign keys: a deleted segment or topic leaves the broadcast naming it (sending it is then refused).
    t.uuid('segment_id').nullable();
    t.uuid('topic_id').nullable();
    t.text('from').notNullable();
    t.specificType('reply_to', 'text[]').notNullable().defaultTo('{}');
    t.text('subject').notNullable();
    t.text('preview_text').nullable();
    t.text('html').nullable();
    t.text('text').nullable();
    t.text('status').notNullable().checkIn(['draft', 'queued', 'scheduled', 'sending', 'sent', 'canceled', 'failed']);
    t.timestamp('scheduled_at', { useTz: true }).nullable();
    t.timestamp('started_at', { useTz: true }).nullable();
    t.timestamp('sent_at', { useTz: true }).nullable();
    t.timestamp('canceled_at', { useTz: true }).nullable();
    t.text('failure_reason').nullable();
    // The fan-out's position: the last contact id it walked past (keyset), and its lease.
    t.uuid('cursor').nullable();
    t.uuid('lease_token').nullable();
    t.timestamp('leased_until', { useTz: true }).nullable();
    t.integer('recipients_count').notNullable().defaultTo(0);
    t.integer('suppressed_count').notNullable().defaultTo(0);
    t.integer('batches').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['team_id', 'id']);
  });
  // The worker's sweep reads only broadcasts with work to do.
  await knex.raw(
    `create index broadcasts_pending on broadcasts (status, scheduled_at) where status in ('queued', 'scheduled', 'sending')`,
  );
  await knex.schema.createTable('broadcast_recipients', (t) => {
    t.uuid('id').primary();
    t.uuid('broadcast_id').notNullable().references('broadcasts.id').onDelete('CASCADE');
    t.uuid('team_id').notNullable();
    t.uuid('contact_id').nullable();
    // Lower case: one copy per address, whatever case its contact row has.
    t.text('email').notNullable();
    t.uuid('email_id').nullable();
    t.text('status').notNullable().checkIn(['sent', 'suppressed']);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['broadcast_id', 'email']);
  });
  await knex.raw('create index broadcast_recipients_by_id on broadcast_recipients (broadcast_id, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('broadcast_recipients');
  await knex.schema.dropTable('broadcasts');
}
