import type { Knex } from 'knex';

// Every send inserted ~8 rows holding a foreign key to its team (the email, its recipients, attachments, events,
// delivery attempts, bulk counter, request log) and one to its domain. PostgreSQL checks each with a KEY SHARE
// lock on the parent row, and when concurrent transactions lock the same team row (one busy team: every send)
// each lock makes a new MultiXact and rewrites that row's xmax: WAL, a dirtied page and SLRU traffic on one hot
// row per send. The sending benchmark spent ~15 % less CPU per message in all (api, mta, PostgreSQL) without these
// constraints. The columns and their indexes stay; what goes is the check and the cascade:
// - email_recipients, email_attachments and delivery_attempts keep their foreign key to their email (ON DELETE
//   CASCADE), whose row is not shared between transactions;
// - emails.domain_id was ON DELETE SET NULL: an email now keeps the id of a deleted domain, which the mta already
//   treats as gone (no signing domain → failed `domain_not_found`), and deleting a busy domain no longer updates
//   every email it ever sent;
// - a team's deletion (not built yet) must delete the rows of these tables itself: emails (its recipients,
//   attachments and attempts follow by cascade), events, request_logs and bulk_counters.
const DROPPED: [table: string, column: string, references: string, onDelete: 'CASCADE' | 'SET NULL'][] = [
  ['emails', 'team_id', 'teams', 'CASCADE'],
  ['emails', 'domain_id', 'domains', 'SET NULL'],
  ['email_recipients', 'team_id', 'teams', 'CASCADE'],
  ['email_attachments', 'team_id', 'teams', 'CASCADE'],
  ['delivery_attempts', 'team_id', 'teams', 'CASCADE'],
  ['events', 'team_id', 'teams', 'CASCADE'],
  ['request_logs', 'team_id', 'teams', 'CASCADE'],
  ['bulk_counters', 'team_id', 'teams', 'CASCADE'],
];

export async function up(knex: Knex): Promise<void> {
  for (const [table, column] of DROPPED) {
    await knex.schema.alterTable(table, (t) => {
      t.dropForeign([column]);
    });
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const [table, column, references, onDelete] of DROPPED) {
    await knex.schema.alterTable(table, (t) => {
      t.foreign(column).references('id').inTable(references).onDelete(onDelete);
    });
  }
}
