import type { Knex } from 'knex';

// What an address chose for a topic: `opt_in` or `opt_out`. An address with no row follows the topic's
// default_subscription. Keyed by address (stored lower case, as suppressions are): a send under a topic checks its
// recipients by address, the unsubscribe page records by address, and the contacts area (a contact is one address
// per team) reads and writes the same rows. `source_email_id` names the email whose unsubscribe link made the
// choice (null when made another way); no foreign key, the choice outlives that email. A deleted topic takes its
// choices with it.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('topic_subscriptions', (t) => {
    t.uuid('topic_id').notNullable().references('topics.id').onDelete('CASCADE');
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('email').notNullable();
    t.text('subscription').notNullable().checkIn(['opt_in', 'opt_out']);
    t.uuid('source_email_id').nullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['topic_id', 'email']);
    // An address's choices across the team's topics (the preference page).
    t.index(['team_id', 'email']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('topic_subscriptions');
}
