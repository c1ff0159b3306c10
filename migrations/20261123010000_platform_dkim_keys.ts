import type { Knex } from 'knex';

// The platform's own DKIM keys: the managed domains (`<word>.<MANAGED_DOMAIN_HOST>`) publish no records, so their
// mail is signed with `d=` MANAGED_DOMAIN_HOST, their parent (DMARC relaxed alignment, RFC 7489 §3.1.1), under
// a selector from configuration. One key per (domain, selector), created once by whichever process needs it
// first (an insert that does nothing on conflict, so two processes end with the same key); the private key is
// sealed with SECRETS_KEY as dkim_keys' are. A new selector in configuration makes a new key: the old row stays,
// so its record can stay published while signatures made with it are still in flight.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('platform_dkim_keys', (t) => {
    t.text('domain').notNullable();
    t.text('selector').notNullable();
    t.text('algorithm').notNullable().defaultTo('rsa').checkIn(['rsa']);
    t.text('public_key').notNullable();
    t.text('private_key_sealed').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['domain', 'selector']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('platform_dkim_keys');
}
