import type { Knex } from 'knex';

// The template an email was sent from (issue 19): its id, kept when the template is deleted later (no foreign key:
// the emails table's hot rows carry none, migration 20261123020000), answered as `template_id` by GET /emails/{id}.
// Nullable without a default: PostgreSQL adds the column without rewriting the table.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table emails add column template_id uuid');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table emails drop column template_id');
}
