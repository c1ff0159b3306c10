import type { Knex } from 'knex';

// The dashboard's accounts (docs/accounts.md): people who sign in (users), their sessions, the one-time tokens
// mailed to them (a sign-up's verification, a password reset), the MFA login challenges and recovery codes. Every
// token and code is stored as its SHA-256 only; a password as its Argon2id hash; a TOTP secret sealed with the
// secrets key. A user belongs to no team by itself: team_members (next migration) says who is in which team.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.uuid('id').primary();
    // NFKC, trimmed, lower case (shared/accounts/addresses.ts): one account per address however it is typed.
    t.text('email').notNullable().unique();
    t.text('name').nullable();
    t.text('password_hash').nullable();
    t.timestamp('email_verified_at', { useTz: true }).nullable();
    t.text('mfa_secret_sealed').nullable();
    t.timestamp('mfa_enabled_at', { useTz: true }).nullable();
    // An enrolment not confirmed yet: its secret, sealed.
    t.text('mfa_pending_secret_sealed').nullable();
    // The TOTP time step of the last code accepted: a code of that step or an earlier one is never taken again.
    t.bigInteger('mfa_last_step').nullable();
    // The team a new session starts in (the last one switched to).
    t.uuid('last_team_id').nullable().references('teams.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  // Mailed one-time tokens: `signup` (the account is made when it is used: data holds the name and password
  // hash, so a sign-up for an address that has an account answers and behaves as any other) and `password_reset`.
  await knex.schema.createTable('account_tokens', (t) => {
    t.uuid('id').primary();
    t.text('kind').notNullable().checkIn(['signup', 'password_reset']);
    t.text('email').notNullable();
    t.uuid('user_id').nullable().references('users.id').onDelete('CASCADE');
    t.jsonb('data').nullable();
    t.text('token_hash').notNullable().unique();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['expires_at']);
  });

  await knex.schema.createTable('sessions', (t) => {
    t.uuid('id').primary();
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('token_hash').notNullable().unique();
    t.uuid('current_team_id').nullable().references('teams.id').onDelete('SET NULL');
    t.text('user_agent').nullable();
    t.text('ip').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // Idle expiry counts from here; written at most once a minute per session.
    t.timestamp('last_seen_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // Absolute expiry: no session outlives it, however busy.
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true }).nullable();
    t.index(['user_id']);
  });

  // A password accepted for a user with MFA on: the code (or a recovery code) must follow with this token.
  await knex.schema.createTable('mfa_challenges', (t) => {
    t.uuid('id').primary();
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('token_hash').notNullable().unique();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('mfa_recovery_codes', (t) => {
    t.uuid('id').primary();
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('code_hash').notNullable();
    t.timestamp('used_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['user_id', 'code_hash']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['mfa_recovery_codes', 'mfa_challenges', 'sessions', 'account_tokens', 'users'])
    await knex.schema.dropTable(table);
}
