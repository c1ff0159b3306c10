import type { Knex } from 'knex';

// A segment's filter: the conditions (shared/segments/filter-schema.ts) that make a contact a member besides the
// members added by hand (contact_segments). Null for a segment by hand only. Stored as the API took it, checked
// then (keys, topics, limits); membership is computed from it at every read (shared/segments/membership.ts),
// never materialised, so a contact that changes joins or leaves the segment at once.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('segments', (t) => {
    t.jsonb('filter').nullable();
  });
  await knex.raw(
    `alter table segments add constraint segments_filter_object check (filter is null or jsonb_typeof(filter) = 'object')`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('segments', (t) => {
    t.dropColumn('filter');
  });
}
