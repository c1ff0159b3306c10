import type { Knex } from 'knex';

// The brand logo (BIMI) of a domain: one SVG Tiny PS file per domain, kept in the blob store under `blob_key`
// and served publicly at its content address. `url` is the address as it was when uploaded, the `l=` value
// the customer publishes in `default._bimi`, so a later change of PUBLIC_BASE_URL does not silently make the
// published record stale. The row goes with its domain.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('domain_brand_logos', (t) => {
    t.uuid('domain_id').primary().references('domains.id').onDelete('CASCADE');
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('sha256').notNullable();
    t.integer('bytes').notNullable();
    t.text('blob_key').notNullable();
    t.text('url').notNullable();
    t.timestamp('uploaded_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('domain_brand_logos');
}
