import type { Knex } from 'knex';

// A team's data retention window (interface spec, Receiving: "a dropped record ages out on the plan's data
// retention window"). Plans are not built: the window is the team's own setting, 30 days unless the operator
// sets another (`cli team set-retention`). The partial index serves the worker's nightly purge of aged-out
// dropped records, which reads only dropped rows, oldest first.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('teams', (t) => {
    t.integer('data_retention_days').notNullable().defaultTo(30);
  });
  await knex.raw(
    'alter table teams add constraint teams_data_retention_days_range check (data_retention_days between 1 and 3650)',
  );
  await knex.raw(
    'create index received_emails_dropped_age on received_emails (created_at) where dropped_reason is not null',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index received_emails_dropped_age');
  await knex.schema.alterTable('teams', (t) => {
    t.dropColumn('data_retention_days');
  });
}
