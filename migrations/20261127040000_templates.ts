import type { Knex } from 'knex';

// Templates: a team's reusable email content, addressed by id or by an alias unique in the team. The row holds the
// draft (what PATCH changes); publishing copies it into template_versions (20261127041000), and sends use only the
// published version. `current_version_id` names the draft: every change of its content gets a new one, so the draft
// is ahead of what sends use exactly when it differs from `published_version_id` (has_unpublished_versions).
// `html` is what the template sends: the given HTML, or the HTML rendered from `document` (a block document) when the
// draft was written, never per send. `variables` is the declared variables, each with its type and fallback.
// Written by hand, never per send: the template keeps its foreign key to the team.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('templates', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('alias').nullable();
    t.text('from').nullable();
    t.text('subject').nullable();
    t.specificType('reply_to', 'text[]').nullable();
    t.text('html').notNullable();
    t.text('text').nullable();
    t.jsonb('document').nullable();
    t.jsonb('variables').notNullable().defaultTo('[]');
    t.uuid('current_version_id').notNullable();
    t.uuid('published_version_id').nullable();
    t.timestamp('published_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // An alias names one template of the team (several templates may have none).
    t.unique(['team_id', 'alias']);
    // Lists page by id (UUID v7, so creation order) within a team: shared/pagination.ts paginate().
    t.index(['team_id', 'id']);
  });
  await knex.raw(`alter table templates
    add constraint templates_name_length check (char_length(name) between 1 and 200),
    add constraint templates_alias_format check (alias is null or alias ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('templates');
}
