import type { Knex } from 'knex';

// Auto-configure (RFC 2136 dynamic updates to the customer's own DNS server): the TSIG credential a customer
// chose to keep (secret sealed with SECRETS_KEY), and every record the platform added to or removed from a
// customer's zone. The platform only ever removes a value it added itself, and this log is how it knows.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('domain_dns_credentials', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.uuid('domain_id').notNullable().unique().references('domains.id').onDelete('CASCADE');
    // A host name or an IP address, resolved and checked again on every use.
    t.text('server').notNullable();
    t.integer('port').notNullable().defaultTo(53);
    t.text('zone').notNullable();
    t.text('key_name').notNullable();
    t.text('algorithm').notNullable().checkIn(['hmac-sha256', 'hmac-sha512']);
    t.text('secret_sealed').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('domain_dns_changes', (t) => {
    t.uuid('id').primary();
    t.uuid('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.uuid('domain_id').notNullable().references('domains.id').onDelete('CASCADE');
    // Fully qualified owner name, lower case, no trailing dot.
    t.text('name').notNullable();
    t.text('type').notNullable();
    // The value in the presentation form the planner compares (`10 feedback.example.net`, the joined TXT text).
    t.text('value').notNullable();
    t.text('action').notNullable().checkIn(['add', 'delete']);
    t.text('zone').notNullable();
    t.text('server').notNullable();
    t.timestamp('at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['domain_id', 'name', 'type']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('domain_dns_changes');
  await knex.schema.dropTable('domain_dns_credentials');
}
