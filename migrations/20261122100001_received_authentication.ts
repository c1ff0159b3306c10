import type { Knex } from 'knex';

// The SPF/DKIM/DMARC/ARC verdicts of a received email as data ({spf, dkim[], dmarc, arc}, see
// inbound/receive/authenticate.ts); the same verdicts are in its headers as an Authentication-Results field.
// Null: not authenticated (a dropped message, or one mailauth could not read).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('received_emails', (t) => {
    t.jsonb('authentication').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('received_emails', (t) => {
    t.dropColumn('authentication');
  });
}
