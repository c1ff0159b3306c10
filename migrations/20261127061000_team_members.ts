import type { Knex } from 'knex';

// Teams of people: members with a role (admin manages members, keys, billing and deletion; member works; viewer
// reads), invitations mailed with a token (stored as its SHA-256), the platform's own team (the sender of the
// account mails, PLATFORM_FROM; at most one), and a team's deletion (scheduled: sending and receiving stop; erased
// by the nightly retention job once purge_after has passed).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('team_members', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('role').notNullable().checkIn(['admin', 'member', 'viewer']);
    t.boolean('sso_exempt').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['team_id', 'user_id']);
    t.index(['user_id']);
  });

  await knex.schema.createTable('team_invitations', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('email').notNullable();
    t.text('role').notNullable().checkIn(['admin', 'member', 'viewer']);
    t.uuid('invited_by').nullable().references('users.id').onDelete('SET NULL');
    t.text('token_hash').notNullable().unique();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('accepted_at', { useTz: true }).nullable();
    t.uuid('accepted_by').nullable().references('users.id').onDelete('SET NULL');
    t.timestamp('revoked_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['team_id', 'id']);
  });

  await knex.schema.alterTable('teams', (t) => {
    t.boolean('platform').notNullable().defaultTo(false);
    t.text('deletion_status').notNullable().defaultTo('none').checkIn(['none', 'scheduled', 'in_progress']);
    t.timestamp('deletion_requested_at', { useTz: true }).nullable();
    t.timestamp('deletion_purge_after', { useTz: true }).nullable();
    t.uuid('deletion_requested_by').nullable();
    t.boolean('ai_assist').notNullable().defaultTo(false);
  });
  await knex.raw('create unique index teams_one_platform on teams (platform) where platform');
  await knex.raw("create index teams_deletion_due on teams (deletion_purge_after) where deletion_status <> 'none'");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index teams_deletion_due');
  await knex.raw('drop index teams_one_platform');
  await knex.schema.alterTable('teams', (t) => {
    for (const c of [
      'platform',
      'deletion_status',
      'deletion_requested_at',
      'deletion_purge_after',
      'deletion_requested_by',
      'ai_assist',
    ])
      t.dropColumn(c);
  });
  await knex.schema.dropTable('team_invitations');
  await knex.schema.dropTable('team_members');
}
