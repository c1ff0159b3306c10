import type { Knex } from 'knex';

// A domain's TLS policy for its outgoing mail (Resend's `tls`): `opportunistic` (STARTTLS when the receiving
// MX offers it, else in the clear; RFC 7435) or `enforced` (never in the clear: such mail waits, deferred, until
// a session is encrypted).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `alter table domains add column tls text not null default 'opportunistic'
       constraint domains_tls_check check (tls in ('opportunistic', 'enforced'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table domains drop column tls');
}
