// The platform's own sender of account mails (PLATFORM_FROM). Its domain belongs to the platform team: one team
// (teams.platform, a unique index keeps it one) that setup makes when PLATFORM_FROM is set, out of the sending
// sandbox (account mail goes to anyone who signs up), with no members and no API key. The domain is an ordinary
// domain of that team: its DKIM key, return path and records are made as for any domain, the operator publishes
// them (`npm run cli -- platform-sender` prints them) and the worker verifies it as it verifies every domain. Account
// mails then take the one send path every email takes (shared/emails/accept.ts), signed, retried and logged alike.
import type { Knex } from 'knex';
import type { Config } from '../config.ts';
import { parseMailbox, type Mailbox } from '../emails/addresses.ts';
import { createDomain, type DomainContext } from '../domains/domains.ts';
import type { DomainRow } from '../domains/store.ts';
import { createTeam, type TeamRow } from '../teams/teams.ts';

export const PLATFORM_TEAM_NAME = 'Postwerk platform';

export interface PlatformSender {
  from: Mailbox;
  team: TeamRow;
  domain: DomainRow;
}

/** PLATFORM_FROM read as a mailbox; null when unset. Throws on an unusable value (a config error). */
export function platformFrom(config: Pick<Config, 'PLATFORM_FROM'>): Mailbox | null {
  if (!config.PLATFORM_FROM) return null;
  try {
    return parseMailbox(config.PLATFORM_FROM);
  } catch (err) {
    throw new Error(`PLATFORM_FROM: ${(err as Error).message}`, { cause: err });
  }
}

export function findPlatformTeam(db: Knex): Promise<TeamRow | undefined> {
  return db<TeamRow>('teams').where({ platform: true }).first();
}

/**
 * The platform team and its PLATFORM_FROM domain, made when missing (at setup, or by the first account mail of a
 * platform that had none). null when PLATFORM_FROM is unset. Two processes at once make one team and one domain.
 */
export async function ensurePlatformSender(
  db: Knex,
  config: Pick<Config, 'PLATFORM_FROM'>,
  ctx: DomainContext,
): Promise<PlatformSender | null> {
  const from = platformFrom(config);
  if (!from) return null;
  return db.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(7412)');
    let team = await findPlatformTeam(trx);
    if (!team) {
      const made = await createTeam(trx, { name: PLATFORM_TEAM_NAME });
      [team] = await trx<TeamRow>('teams')
        .where({ id: made.id })
        .update({ platform: true, sandbox_regions: trx.raw("'{}'::text[]") } as never)
        .returning('*');
    }
    let domain = await trx<DomainRow>('domains').where({ team_id: team.id, name: from.domain }).first();
    domain ??= await createDomain(trx, team.id, { name: from.domain }, ctx);
    return { from, team, domain };
  });
}
