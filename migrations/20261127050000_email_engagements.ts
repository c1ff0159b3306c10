import type { Knex } from 'knex';

// Open and click tracking (docs/tracking.md). Every hit on a tracking host that names a real recipient is one
// `email_engagements` row: its kind, the link (clicks), the user agent and the IP address as TRACKING_IP_ADDRESSES
// keeps it, and `machine`, the rule that took it for a machine's (an Apple Mail Privacy Protection proxy, a link
// scanner, a HEAD request) or null for a person's. `email_recipient_engagement` holds each recipient's first human
// open and click: the one conditional write that decides which hit fires `email.opened` / `email.clicked`, however
// many hits and api copies record at once. Written in batches by the api (shared/tracking/engagement.ts), so no
// foreign keys: the recipient is checked by the insert's join, and these rows follow their email by id.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('email_engagements', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable();
    t.uuid('email_id').notNullable();
    t.uuid('recipient_id').notNullable();
    t.uuid('domain_id').notNullable();
    t.text('kind').notNullable().checkIn(['open', 'click']);
    t.integer('link_index').nullable();
    t.text('link').nullable();
    t.text('user_agent').notNullable().defaultTo('');
    t.text('ip').nullable();
    t.text('machine').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['team_id', 'email_id']);
    t.index(['recipient_id', 'created_at']);
  });
  await knex.schema.createTable('email_recipient_engagement', (t) => {
    t.uuid('recipient_id').primary();
    t.uuid('team_id').notNullable();
    t.uuid('email_id').notNullable();
    t.timestamp('first_opened_at', { useTz: true }).nullable();
    t.timestamp('first_clicked_at', { useTz: true }).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('email_recipient_engagement');
  await knex.schema.dropTable('email_engagements');
}
