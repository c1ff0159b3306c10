import type { Knex } from 'knex';

// An email's events in order, for the MCP server's "what happened to this email" resource (docs/mcp.md): without
// it, reading one email's timeline scans every event of its team. Partial (only rows that name an email) and built
// CONCURRENTLY, so adding it never blocks the sends that write events. (`\\?` is knex's escape of the jsonb operator.)
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `create index concurrently if not exists events_team_email on events (team_id, (data->>'email_id'), created_at)
     where data \\? 'email_id'`,
    [],
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists events_team_email');
}
