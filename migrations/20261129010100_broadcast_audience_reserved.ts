import type { Knex } from 'knex';

// The segment's size when the broadcast's send was accepted: what the monthly marketing allowance holds for it
// until its fan-out has reached them (shared/broadcasts/gate.ts), so two broadcasts queued back to back cannot
// together exceed the allowance. Null for drafts and broadcasts sent before this column.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('broadcasts', (t) => {
    t.integer('audience_reserved').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('broadcasts', (t) => {
    t.dropColumn('audience_reserved');
  });
}
