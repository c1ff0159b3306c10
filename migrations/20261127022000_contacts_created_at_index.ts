import type { Knex } from 'knex';

// The segment filter's `created_at` conditions (before, after, within the last N days): a narrow window reads only
// its own contacts instead of the team's (the last week of a million: ~150 ms instead of ~350-500 ms on the loaded
// bench machine; a wide window still scans, as it should). Appended to in creation order, so it costs a bulk write
// of contacts little (~10 % on a COPY of 300,000; bench/README.md, the segments suite, has the measurements and why
// properties have no index).
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index contacts_team_created_at on contacts (team_id, created_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index contacts_team_created_at');
}
