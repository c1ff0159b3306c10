import type { Knex } from 'knex';

// Published versions of a template: what a publish froze, numbered from 1 per template. A version is immutable
// (a trigger refuses any UPDATE), so a send that names the template renders exactly what was published, and the
// compiled form the api caches per version id can never go stale. Deleting the template deletes its versions; the
// emails sent with them keep their rendered content.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('template_versions', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable();
    t.uuid('template_id').notNullable().references('templates.id').onDelete('CASCADE');
    t.integer('number').notNullable();
    t.text('from').nullable();
    t.text('subject').nullable();
    t.specificType('reply_to', 'text[]').nullable();
    t.text('html').notNullable();
    t.text('text').nullable();
    t.jsonb('document').nullable();
    t.jsonb('variables').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['template_id', 'number']);
  });
  await knex.raw(`
    create function template_versions_immutable() returns trigger language plpgsql as $$
    begin
      raise exception 'template versions are immutable';
    end $$;
    create trigger template_versions_immutable before update on template_versions
      for each row execute function template_versions_immutable();`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('template_versions');
  await knex.raw('drop function template_versions_immutable()');
}
