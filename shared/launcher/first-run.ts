import type { Knex } from 'knex';
import { createTeamWithKey } from '../cli/commands.ts';

/** The team the first run made and its key (the only time the key is shown). */
export type FirstTeam = Awaited<ReturnType<typeof createTeamWithKey>>;

/** On an empty database, creates the first team and its key. Two launchers racing create only one. */
export async function firstRun(db: Knex, teamName: string, managedHost: string): Promise<FirstTeam | null> {
  return db.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(7411)');
    // The platform team (shared/accounts/platform-sender.ts) is not a customer's: it does not make a database used.
    const [{ count }] = await trx('teams').where({ platform: false }).count({ count: '*' });
    if (Number(count) > 0) return null;
    return createTeamWithKey(trx, teamName, managedHost);
  });
}
