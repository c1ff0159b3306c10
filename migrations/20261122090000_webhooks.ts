import type { Knex } from 'knex';

// Webhooks: endpoints, one delivery per event and endpoint, one attempt row per POST, and the fan-out cursor.
// A delivery's id is the `webhook-id` header and the WebhookEvent id the api shows; its payload is the exact
// body text, serialised once at fan-out, so every attempt (and a replay) signs and sends the same bytes.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('endpoint').notNullable();
    t.specificType('events', 'text[]').notNullable();
    t.text('status').notNullable().checkIn(['enabled', 'disabled']);
    t.text('secret_sealed').notNullable();
    t.text('secret_last4').notNullable();
    // The delivery lease: while set in the future one worker sends this endpoint's deliveries, one at a time.
    t.timestamp('leased_until', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['team_id', 'id']);
  });

  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.uuid('endpoint_id').notNullable().references('webhook_endpoints.id').onDelete('CASCADE');
    t.uuid('event_id').notNullable();
    t.text('type').notNullable();
    t.text('payload').notNullable();
    t.text('status').notNullable().checkIn(['pending', 'attempting', 'success', 'failed']);
    t.integer('attempt_count').notNullable().defaultTo(0);
    t.timestamp('next_attempt_at', { useTz: true }).nullable();
    t.integer('last_http_status').nullable();
    t.boolean('parked').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // A re-run of the fan-out over the same events creates nothing twice.
    t.unique(['endpoint_id', 'event_id']);
    t.index(['endpoint_id', 'id']);
  });
  // The delivery sweep's probe: what is due, per endpoint, oldest first.
  await knex.raw(`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_id, next_attempt_at, id)
    WHERE status IN ('pending', 'attempting') AND NOT parked`);

  await knex.schema.createTable('webhook_attempts', (t) => {
    t.uuid('id').primary();
    t.uuid('delivery_id').notNullable().references('webhook_deliveries.id').onDelete('CASCADE');
    t.integer('attempt_number').notNullable();
    t.integer('http_status_code').nullable();
    t.text('response').nullable();
    t.integer('duration_ms').notNullable();
    t.text('error').nullable();
    t.timestamp('sent_at', { useTz: true }).notNullable();
    t.index(['delivery_id', 'id']);
  });

  // One row: the newest event already fanned out. Advanced in the transaction that creates the deliveries.
  await knex.schema.createTable('webhook_fanout_cursor', (t) => {
    t.integer('id').primary();
    t.uuid('last_event_id').nullable();
  });
  await knex('webhook_fanout_cursor').insert({ id: 1, last_event_id: null });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_fanout_cursor');
  await knex.schema.dropTable('webhook_attempts');
  await knex.schema.dropTable('webhook_deliveries');
  await knex.schema.dropTable('webhook_endpoints');
}
