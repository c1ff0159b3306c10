import type { Knex } from 'knex';

// The status indexes held every email and recipient ever sent, although only the scheduler (scheduled emails
// coming due) and the mta's sweep (recipients queued or deferred) search by status. Worse, the planner picked
// emails (status, scheduled_at) for the mta claim's `where id = $1 and status = 'queued'`, reading every queued
// email to find one: with a backlog of thousands that was a scan per delivery. Partial indexes keep only the rows
// those searches look for: a status change outside them no longer adds index entries, and `status = 'queued'`
// has no index to lure the planner away from the primary key.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('emails', (t) => {
    t.dropIndex(['status', 'scheduled_at']);
  });
  await knex.raw(`create index emails_scheduled_due on emails (scheduled_at) where status = 'scheduled'`);
  await knex.schema.alterTable('email_recipients', (t) => {
    t.dropIndex(['status', 'next_attempt_at']);
  });
  await knex.raw(
    `create index email_recipients_pending on email_recipients (next_attempt_at) where status in ('queued', 'deferred')`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index email_recipients_pending');
  await knex.schema.alterTable('email_recipients', (t) => {
    t.index(['status', 'next_attempt_at']);
  });
  await knex.raw('drop index emails_scheduled_due');
  await knex.schema.alterTable('emails', (t) => {
    t.index(['status', 'scheduled_at']);
  });
}
