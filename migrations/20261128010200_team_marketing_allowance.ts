import type { Knex } from 'knex';

// The monthly marketing allowance: broadcast recipients a team may reach per calendar month (UTC); null: no limit.
// Set by the operator (`team set-marketing-allowance`) until plans exist.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('teams', (t) => {
    t.integer('marketing_monthly_limit').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('teams', (t) => {
    t.dropColumn('marketing_monthly_limit');
  });
}
