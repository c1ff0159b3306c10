// Operator commands of the accounts area: the platform sender (PLATFORM_FROM) and adding a person to a team (the
// first team setup makes has no members; a person signs up, then the operator makes them its admin).
import type { Config } from '../config.ts';
import { createResolver } from '../dns/resolver.ts';
import { presentRecord } from '../domains/present.ts';
import { recordsOf } from '../domains/store.ts';
import { ensurePlatformSender } from '../accounts/platform-sender.ts';
import { normalizeEmail } from '../accounts/addresses.ts';
import { findUserByEmail } from '../accounts/users.ts';
import { getTeam } from '../teams/teams.ts';
import { newId } from '../ids.ts';
import { secretsKey } from '../secrets.ts';
import { need, teamFlag, UsageError, type Command } from './command.ts';

export const accountCommands: Record<string, Command> = {
  'platform-sender': {
    summary: "the platform team and PLATFORM_FROM's domain (made when missing): its status and the records to publish",
    flags: {},
    run: async (db, _f, given) => {
      const config = given as Config;
      const sender = await ensurePlatformSender(db, config, {
        hosts: config,
        secrets: secretsKey(config),
        resolver: createResolver({ servers: config.DNS_SERVERS ?? [] }),
        reservedAllowed: config.RESERVED_TLDS_ALLOWED ?? [],
      });
      if (!sender) throw new UsageError('PLATFORM_FROM is not set: account mails are not sent');
      const records = await recordsOf(db, sender.domain.id);
      return {
        team_id: sender.team.id,
        from: config.PLATFORM_FROM,
        domain: { id: sender.domain.id, name: sender.domain.name, status: sender.domain.status },
        records: records.map((r) => ({ ...presentRecord(r), fqdn: `${r.name}.${sender.domain.name}` })),
      };
    },
  },
  'team add-member': {
    summary: 'makes a person who has an account a member of a team (e.g. the admin of the first team)',
    flags: {
      team: teamFlag,
      email: { help: "the person's account address", required: true, value: 'E' },
      role: { help: 'admin (default), member or viewer', value: 'R' },
    },
    run: async (db, f) => {
      const role = typeof f.role === 'string' ? f.role : 'admin';
      if (!['admin', 'member', 'viewer'].includes(role)) throw new UsageError('--role is admin, member or viewer');
      const team = await getTeam(db, need(f, 'team'));
      const user = await findUserByEmail(db, normalizeEmail(need(f, 'email')));
      if (!user) throw new UsageError('no account has that address: the person signs up first');
      await db('team_members')
        .insert({ id: newId(), team_id: team.id, user_id: user.id, role })
        .onConflict(['team_id', 'user_id'])
        .merge({ role });
      return { team_id: team.id, user_id: user.id, email: user.email, role };
    },
  },
};
