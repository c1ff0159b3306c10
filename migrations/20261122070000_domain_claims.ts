import type { Knex } from 'knex';

// Domain claims: a team proves control of a domain another team has verified (a TXT record at
// `_postwerk-claim.<name>`), and the domain moves to it. `domain_id` is the id the domain takes in the claiming
// team, allocated when the claim starts (the path id of GET/verify), so it has no foreign key: the domain row
// exists only once the claim completes.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('domain_claims', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.uuid('domain_id').notNullable().unique();
    t.text('name').notNullable();
    t.text('region').notNullable().defaultTo('us-east-1');
    // The settings the claimer asked for, applied to the domain it receives.
    t.text('custom_return_path').notNullable();
    t.boolean('open_tracking').notNullable().defaultTo(false);
    t.boolean('click_tracking').notNullable().defaultTo(false);
    t.text('tracking_subdomain').nullable();
    t.text('token').notNullable();
    t.text('status')
      .notNullable()
      .defaultTo('pending')
      .checkIn(['pending', 'verified', 'completed', 'blocked', 'expired', 'superseded', 'canceled', 'failed']);
    t.text('record_status')
      .notNullable()
      .defaultTo('not_started')
      .checkIn(['not_started', 'pending', 'verified', 'failed', 'temporary_failure']);
    t.text('blocked_reason').nullable().checkIn(['grace_period', 'recent_owner_activity', 'pending_scheduled_emails']);
    t.text('failure_reason').nullable();
    // Re-check schedule once the claimer asked for verification (null: nobody asked yet, or the claim is over).
    t.timestamp('next_check_at', { useTz: true }).nullable();
    t.timestamp('last_checked_at', { useTz: true }).nullable();
    t.integer('check_count').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('completed_at', { useTz: true }).nullable();
    t.index(['name']);
    t.index(['next_check_at']);
  });
  // One open claim per team and name: a new one supersedes the last.
  await knex.raw(`create unique index domain_claims_open_per_team on domain_claims (team_id, name)
    where status in ('pending', 'verified', 'blocked')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('domain_claims');
}
