// Operator commands on teams and their keys.
import type { Knex } from 'knex';
import { createKey } from '../api-keys/keys.ts';
import { createManagedDomain } from '../domains/managed.ts';
import {
  createTeam,
  getTeam,
  liftSandbox,
  setRateLimit,
  setReceiveLimits,
  setContactsIncluded,
  setRetention,
  setSendLimits,
  suspendTeam,
  unsuspendTeam,
  type TeamRow,
} from '../teams/teams.ts';
import { verifyIdentity } from '../teams/identities.ts';
import { iso } from '../time.ts';
import { need, teamFlag, UsageError, type Command, type Flags } from './command.ts';

const DEFAULT_MANAGED_HOST = 'postwerk.localhost';

export function teamJson(t: TeamRow) {
  return {
    object: 'team',
    id: t.id,
    name: t.name,
    slug: t.slug,
    status: t.status,
    plan: t.plan,
    rate_limit_rps: t.rate_limit_rps,
    sandbox_regions: t.sandbox_regions,
    created_at: iso(t.created_at),
  };
}

/** A new team, its managed domain and its first full_access key, in one transaction. */
export async function createTeamWithKey(db: Knex, name: string, managedHost = DEFAULT_MANAGED_HOST) {
  return db.transaction(async (trx) => {
    const team = await createTeam(trx, { name });
    const managed = await createManagedDomain(trx, team.id, managedHost);
    const { token } = await createKey(trx, team.id, { name: 'Default', permission: 'full_access' });
    return { team: { ...teamJson(team), managed_domain: managed.name }, api_key: token };
  });
}

/** `--name` (N) as a whole number of `what` from 1 to max, or "none" (null); absent: undefined. */
function limitFlag(f: Flags, name: string, max: number, what: string): number | null | undefined {
  const v = f[name];
  if (v === undefined) return undefined;
  if (v === 'none') return null;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 1 || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? 'at least 1' : `1 to ${max}`;
    throw new UsageError(`--${name} is a whole number of ${what} (${range}) or "none"`);
  }
  return n;
}

const team = { team: teamFlag };

export const teamCommands: Record<string, Command> = {
  'team create': {
    summary: 'a team, its managed domain and its first full_access key (shown once)',
    flags: { name: { help: "the team's name (1-200 characters)", required: true, value: 'NAME' } },
    run: (db, f, config) => {
      const name = need(f, 'name');
      if (name.length > 200) throw new UsageError('--name is at most 200 characters');
      return createTeamWithKey(db, name, config.MANAGED_DOMAIN_HOST);
    },
  },
  'team list': {
    summary: 'every team with its id, status and managed domain, oldest first',
    flags: {},
    run: async (db) => {
      const rows = await db('teams as t')
        .leftJoin('domains as d', function () {
          this.on('d.team_id', 't.id').andOn('d.managed', db.raw('true'));
        })
        .orderBy('t.created_at')
        .select<(TeamRow & { managed_domain: string | null })[]>('t.*', 'd.name as managed_domain');
      return { data: rows.map((t) => ({ ...teamJson(t), managed_domain: t.managed_domain })) };
    },
  },
  'api-key create': {
    summary: 'a new API key for an existing team (the token is shown once), e.g. when the first one is lost',
    flags: {
      ...team,
      name: { help: 'a name for the key (default "CLI")', value: 'NAME' },
      permission: { help: 'full_access (default) or sending_access', value: 'P' },
      domain: { help: 'with sending_access: the one domain id the key may send from', value: 'ID' },
    },
    run: async (db, f) => {
      const permission = f.permission ?? 'full_access';
      if (permission !== 'full_access' && permission !== 'sending_access')
        throw new UsageError('--permission is full_access or sending_access');
      const name = typeof f.name === 'string' ? f.name : 'CLI';
      if (name.length < 1 || name.length > 50) throw new UsageError('--name is 1 to 50 characters');
      const owner = await getTeam(db, need(f, 'team'));
      const domain_id = typeof f.domain === 'string' ? f.domain : null;
      const { row, token } = await createKey(db, owner.id, { name, permission, domain_id });
      return { id: row.id, name: row.name, permission: row.permission, team_id: owner.id, token };
    },
  },
  'team verify-identity': {
    summary: 'a verified address of the team (its managed domain and the sandbox may send to it)',
    flags: { ...team, email: { help: 'the address', required: true, value: 'E' } },
    run: async (db, f) => ({ identity: await verifyIdentity(db, need(f, 'team'), need(f, 'email')) }),
  },
  'team sandbox-lift': {
    summary: "takes a region out of the team's sending sandbox",
    flags: {
      ...team,
      region: { help: 'us-east-1, eu-west-1, sa-east-1 or ap-northeast-1', required: true, value: 'R' },
    },
    run: async (db, f) => ({ team: teamJson(await liftSandbox(db, need(f, 'team'), need(f, 'region'))) }),
  },
  'team set-rate-limit': {
    summary: "the team's API requests per second (shared by every api copy)",
    flags: { ...team, rps: { help: 'requests per second', required: true, value: 'N' } },
    run: async (db, f) => ({ team: teamJson(await setRateLimit(db, need(f, 'team'), Number(need(f, 'rps')))) }),
  },
  'team set-send-limits': {
    summary: "the team's daily and monthly send limits (429 past them)",
    flags: {
      ...team,
      daily: { help: 'emails a UTC day, or "none"', value: 'N|none' },
      monthly: { help: 'emails a month, or "none"', value: 'N|none' },
    },
    run: async (db, f) => {
      const daily = limitFlag(f, 'daily', Number.MAX_SAFE_INTEGER, 'emails');
      const monthly = limitFlag(f, 'monthly', Number.MAX_SAFE_INTEGER, 'emails');
      if (daily === undefined && monthly === undefined) throw new UsageError('give --daily and/or --monthly');
      return { team: await setSendLimits(db, need(f, 'team'), { daily, monthly }) };
    },
  },
  'team set-receive-limits': {
    summary: "the team's received-mail limits (past them a message is recorded dropped)",
    flags: {
      ...team,
      'daily-cap': { help: 'kept messages a UTC day, or "none"', value: 'N|none' },
      'storage-bytes': { help: 'bytes of kept messages, or "none"', value: 'N|none' },
    },
    run: async (db, f) => {
      const dailyCap = limitFlag(f, 'daily-cap', 2_147_483_647, 'messages a day');
      const storageBytes = limitFlag(f, 'storage-bytes', Number.MAX_SAFE_INTEGER, 'bytes');
      if (dailyCap === undefined && storageBytes === undefined)
        throw new UsageError('give --daily-cap and/or --storage-bytes');
      return { team: await setReceiveLimits(db, need(f, 'team'), { dailyCap, storageBytes }) };
    },
  },
  'team set-retention': {
    summary: "the team's data retention window: dropped received records older than it are removed",
    flags: { ...team, days: { help: 'days (1 to 3650; 30 unless set)', required: true, value: 'N' } },
    run: async (db, f) => {
      const days = Number(need(f, 'days'));
      if (!Number.isInteger(days) || days < 1 || days > 3650)
        throw new UsageError('--days is a whole number of days (1 to 3650)');
      return { team: await setRetention(db, need(f, 'team'), days) };
    },
  },
  'team set-contacts-included': {
    summary: "the team's contact allowance: billable contacts past it are refused (0 = unlimited)",
    flags: {
      ...team,
      contacts: {
        help: 'billable contacts the team may have (0 for unlimited, the default)',
        required: true,
        value: 'N',
      },
    },
    run: async (db, f) => {
      const raw = need(f, 'contacts');
      const n = Number(raw);
      if (!/^[0-9]+$/.test(raw) || !Number.isSafeInteger(n) || n > 2_147_483_647)
        throw new UsageError('--contacts is a whole number of contacts (0 for unlimited)');
      return { team: await setContactsIncluded(db, need(f, 'team'), n) };
    },
  },
  'team set-marketing-allowance': {
    summary: "the team's monthly marketing allowance: broadcast recipients per calendar month (0 = unlimited)",
    flags: {
      ...team,
      recipients: { help: 'broadcast recipients a month (0 for unlimited, the default)', required: true, value: 'N' },
    },
    run: async (db, f) => {
      const raw = need(f, 'recipients');
      const n = Number(raw);
      if (!/^[0-9]+$/.test(raw) || !Number.isSafeInteger(n) || n > 2_147_483_647)
        throw new UsageError('--recipients is a whole number of recipients (0 for unlimited)');
      const [row] = await db('teams')
        .where({ id: need(f, 'team') })
        .update({ marketing_monthly_limit: n === 0 ? null : n, updated_at: db.fn.now() })
        .returning(['id', 'marketing_monthly_limit']);
      if (!row) throw new UsageError('no such team');
      return { team: row };
    },
  },
  'team suspend': {
    summary: 'suspends the team: its keys answer 403 suspended_api_key',
    flags: team,
    run: async (db, f) => ({ team: teamJson(await suspendTeam(db, need(f, 'team'))) }),
  },
  'team unsuspend': {
    summary: 'lifts a suspension',
    flags: team,
    run: async (db, f) => ({ team: teamJson(await unsuspendTeam(db, need(f, 'team'))) }),
  },
};
