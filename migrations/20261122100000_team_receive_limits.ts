import type { Knex } from 'knex';

// Receiving limits of a team (interface spec, Limits, "Received mail"), set by the operator CLI
// (`team set-receive-limits`); null is no limit. The receive job counts a team's kept messages of one UTC day
// (daily_cap) and the bytes of its kept messages (storage_quota); the index serves the day's count.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('teams', (t) => {
    t.integer('receive_daily_cap').nullable();
    t.bigInteger('receive_storage_bytes').nullable();
  });
  await knex.schema.alterTable('received_emails', (t) => {
    t.index(['team_id', 'created_at'], 'received_emails_team_created');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('received_emails', (t) => {
    t.dropIndex(['team_id', 'created_at'], 'received_emails_team_created');
  });
  await knex.schema.alterTable('teams', (t) => {
    t.dropColumn('receive_storage_bytes');
    t.dropColumn('receive_daily_cap');
  });
}
