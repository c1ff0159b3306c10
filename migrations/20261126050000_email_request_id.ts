import type { Knex } from 'knex';

// The request that sent an email, as its process logged it: the api's request id (X-Request-Id) or the SMTP
// submission session's id. The mta reads it with the email when it delivers and the worker when it releases a
// scheduled email or sends the email's webhooks, so their log lines about the email carry the same id as the
// api's `request` line (docs/observability.md). Kept with the row rather than in the deliver job's data: every
// job of the email (retries, the sweep's) reads the row anyway. Null for emails accepted before this column.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('emails', (t) => {
    t.text('request_id');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('emails', (t) => {
    t.dropColumn('request_id');
  });
}
