import type { Knex } from 'knex';

// Receiving rule 4: a received email's html and text are kept exactly as decoded. A PostgreSQL text column holds
// neither U+0000 nor an unpaired UTF-16 surrogate, which hostile (or merely odd) mail may decode to: such a value
// is kept whole as its UTF-16 code units in these columns, beside the text column's storable form (which search
// and other readers of the text column keep using). Null for every ordinary value.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('received_emails', (t) => {
    t.binary('html_exact').nullable();
    t.binary('text_exact').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('received_emails', (t) => {
    t.dropColumn('text_exact');
    t.dropColumn('html_exact');
  });
}
