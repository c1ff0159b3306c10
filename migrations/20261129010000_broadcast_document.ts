import type { Knex } from 'knex';

// A broadcast may be written as a block document (shared/templates/blocks.ts) instead of html: the document is kept
// as given, its html and text rendered from it when written (the columns the fan-out merges per recipient). A
// broadcast made from a template names it (`template_id`, no foreign key: the template may be deleted later, the
// broadcast keeps its snapshot of the content).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('broadcasts', (t) => {
    t.jsonb('document').nullable();
    t.uuid('template_id').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('broadcasts', (t) => {
    t.dropColumn('template_id');
    t.dropColumn('document');
  });
}
