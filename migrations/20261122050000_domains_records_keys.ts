import type { Knex } from 'knex';

// The domains area: a domain's settings and verification schedule, the DNS records it must publish with
// their last verdicts, its DKIM keys (private keys sealed with SECRETS_KEY), a pool of pre-generated keys so
// creating a domain does not wait for RSA key generation, verified sender identities of a team, and the
// event rows every area records for webhooks.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('domains', (t) => {
    t.text('custom_return_path').notNullable().defaultTo('send');
    t.boolean('open_tracking').notNullable().defaultTo(false);
    t.boolean('click_tracking').notNullable().defaultTo(false);
    t.text('tracking_subdomain').nullable();
    t.text('receiving_host').notNullable().defaultTo('@');
    t.text('sending').notNullable().defaultTo('enabled').checkIn(['enabled', 'disabled']);
    t.text('receiving').notNullable().defaultTo('disabled').checkIn(['enabled', 'disabled']);
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // Verification schedule: pending domains are checked on a backoff for 72 h from checking_since;
    // verified ones daily.
    t.timestamp('checking_since', { useTz: true }).nullable();
    t.timestamp('last_checked_at', { useTz: true }).nullable();
    t.timestamp('next_check_at', { useTz: true }).nullable();
    t.integer('check_count').notNullable().defaultTo(0);
    t.timestamp('verified_at', { useTz: true }).nullable();
    t.index(['next_check_at']);
    t.index(['name']);
  });
  await knex.raw(`alter table domains add constraint domains_status_check check (status in
    ('not_started','pending','verified','partially_verified','partially_failed','failed'))`);

  await knex.schema.createTable('dkim_keys', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.uuid('domain_id').notNullable().references('domains.id').onDelete('CASCADE');
    t.text('selector').notNullable();
    t.text('algorithm').notNullable().defaultTo('rsa').checkIn(['rsa', 'ed25519']);
    t.text('public_key').notNullable();
    t.text('private_key_sealed').notNullable();
    // pending: published, not yet signing; active: signs; retiring: still published, valid until retire_after
    t.text('status').notNullable().checkIn(['pending', 'active', 'retiring', 'retired']);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('activated_at', { useTz: true }).nullable();
    t.timestamp('retire_after', { useTz: true }).nullable();
    t.unique(['domain_id', 'selector']);
  });

  await knex.schema.createTable('dkim_key_pool', (t) => {
    t.uuid('id').primary();
    t.text('algorithm').notNullable().defaultTo('rsa');
    t.text('public_key').notNullable();
    t.text('private_key_sealed').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('domain_records', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.uuid('domain_id').notNullable().references('domains.id').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.text('record').notNullable();
    t.text('name').notNullable();
    t.text('type').notNullable();
    t.text('value').notNullable();
    t.integer('priority').nullable();
    t.text('status').notNullable().defaultTo('not_started');
    t.text('found').nullable();
    t.timestamp('last_checked_at', { useTz: true }).nullable();
    t.unique(['domain_id', 'record', 'name', 'type', 'value']);
  });

  await knex.schema.createTable('team_identities', (t) => {
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('email').notNullable();
    t.timestamp('verified_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['team_id', 'email']);
  });

  await knex.schema.createTable('events', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('type').notNullable();
    t.jsonb('data').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['team_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('events');
  await knex.schema.dropTable('team_identities');
  await knex.schema.dropTable('domain_records');
  await knex.schema.dropTable('dkim_key_pool');
  await knex.schema.dropTable('dkim_keys');
  await knex.raw('alter table domains drop constraint domains_status_check');
  await knex.schema.alterTable('domains', (t) => {
    for (const c of [
      'custom_return_path',
      'open_tracking',
      'click_tracking',
      'tracking_subdomain',
      'receiving_host',
      'sending',
      'receiving',
      'updated_at',
      'checking_since',
      'last_checked_at',
      'next_check_at',
      'check_count',
      'verified_at',
    ])
      t.dropColumn(c);
  });
}
