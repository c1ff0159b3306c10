import type { Knex } from 'knex';

// When the recipient used this copy's own unsubscribe link (the one-click, or the page's unsubscribe) while still
// subscribed to what it ends: the fact a broadcast's `unsubscribed` report lists, rather than a metrics counter.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('email_recipients', (t) => {
    t.timestamp('unsubscribed_at', { useTz: true }).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('email_recipients', (t) => {
    t.dropColumn('unsubscribed_at');
  });
}
