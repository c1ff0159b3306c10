import type { Knex } from 'knex';

// A contact an import's row called `never_subscribed` (interface spec, Contact imports: "a never_subscribed or
// unsubscribed row is stored that way"): not unsubscribed from everything (it never unsubscribed, and may opt in
// later), but no topic's `opt_in` default reaches it; only a choice of its own does (shared/topics/subscriptions.ts).
// A constant default: PostgreSQL adds the column without rewriting the table.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table contacts add column never_subscribed boolean not null default false');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table contacts drop column never_subscribed');
}
