import type { Knex } from 'knex';

// A request made with an OAuth access token (the API's or an MCP tool call, docs/oauth.md) names its grant, as a
// keyed request names its API key: GET /logs answers it as `oauth_grant_id`. Nullable without a default: the
// column is added without rewriting the table.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table request_logs add column oauth_grant_id uuid');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table request_logs drop column oauth_grant_id');
}
