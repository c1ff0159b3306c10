import type { Knex } from 'knex';

// The OAuth authorization server's storage (docs/oauth.md). `oauth_models`: what oidc-provider stores through its
// adapter (shared/oauth/adapter.ts), one row per model and id, the payload as it gave it; the lookups it makes by
// grant (revocation of a whole grant), by uid (sessions) and by user code are indexed; consumed marks a used code or
// rotated refresh token, so a replay is seen. `oauth_grants`: what a person granted to a client for a team, kept
// after revocation with when and why (GET /oauth/grants). `oauth_signing_keys`: the provider's JWKS, sealed under
// the secrets key as DKIM keys are.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('oauth_models', (t) => {
    t.text('model').notNullable();
    t.text('id').notNullable();
    t.jsonb('payload').notNullable();
    t.timestamp('expires_at', { useTz: true }).nullable();
    t.timestamp('consumed_at', { useTz: true }).nullable();
    t.text('grant_id').nullable();
    t.text('uid').nullable();
    t.text('user_code').nullable();
    t.primary(['model', 'id']);
    t.index(['grant_id']);
    t.index(['uid']);
    t.index(['user_code']);
    t.index(['expires_at']);
  });
  await knex.schema.createTable('oauth_grants', (t) => {
    t.uuid('id').primary();
    t.text('provider_grant_id').notNullable().unique();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('client_id').notNullable();
    t.specificType('scopes', 'text[]').notNullable();
    t.specificType('resources', 'text[]').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('revoked_at', { useTz: true }).nullable();
    t.text('revoked_reason').nullable();
    t.index(['team_id', 'created_at']);
  });
  await knex.schema.createTable('oauth_signing_keys', (t) => {
    t.text('kid').primary();
    t.text('jwk_sealed').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('oauth_signing_keys');
  await knex.schema.dropTable('oauth_grants');
  await knex.schema.dropTable('oauth_models');
}
