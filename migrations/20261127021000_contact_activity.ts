import type { Knex } from 'knex';

// What an address last did with a team's mail: when a copy was last delivered to it, last opened, last clicked.
// The segment filter's engagement conditions ("received / opened / clicked in the last N days") read this one row
// per address instead of the events (jsonb, one row per event and email). Kept as events happen: the mta upserts
// last_delivered_at in the same statement that records the recipient delivered (mta/delivery/record.ts), open and
// click tracking through noteActivity (shared/contacts/activity.ts). Only ever moved forward (greatest()), so a late
// or replayed record cannot make an address look less active than it was.
//
// Keyed by address (lower case), as topic_subscriptions and suppressions are: a contact is one address per team,
// mail reaches addresses whether or not they are contacts, and a contact created later (an import) brings the
// history of its address with it. A deleted contact's address keeps its activity, as it keeps its topic choices:
// the row describes mail that was sent, not the contact. What it describes is never purged either: sent emails and
// their events are kept (worker maintenance removes idempotency keys, request logs and dropped received messages
// only), so an activity row never says more than the email records do. A team's deletion (not built yet) must
// delete its rows, like the other tables without a foreign key to the team (20261123020000).
//
// No foreign key to the team: every delivery writes a row (see 20261123020000_hot_rows_without_foreign_keys). No
// index on the times either: the filters read a team's rows in one scan (a million in ~0.1 s), and an index on a
// time would make every delivery's update write an index entry.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('contact_activity', (t) => {
    t.uuid('team_id').notNullable();
    t.text('address').notNullable();
    t.timestamp('last_delivered_at', { useTz: true }).nullable();
    t.timestamp('last_opened_at', { useTz: true }).nullable();
    t.timestamp('last_clicked_at', { useTz: true }).nullable();
    t.primary(['team_id', 'address']);
  });
  // Most writes update a row in place (an address mailed again): room on each page keeps them HOT updates (no index
  // entry written: only the primary key is indexed, and it never changes).
  await knex.raw('alter table contact_activity set (fillfactor = 90)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('contact_activity');
}
