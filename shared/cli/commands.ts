// Operator commands. Each takes parsed flags and answers a JSON-serialisable value.
import type { Knex } from 'knex';
import type { Config } from '../config.ts';
import { createKey } from '../api-keys/keys.ts';
import {
  createTeam,
  liftSandbox,
  setRateLimit,
  setReceiveLimits,
  setRetention,
  setSendLimits,
  suspendTeam,
  unsuspendTeam,
  type TeamRow,
} from '../teams/teams.ts';
import { iso } from '../time.ts';
import { createManagedDomain } from '../domains/managed.ts';
import { verifyIdentity } from '../teams/identities.ts';
import { ensurePlatformKey, platformDkimRecord } from '../domains/platform-dkim.ts';
import { addEd25519Key, findOperatorDomain, removeEd25519Key } from '../domains/ed25519.ts';
import { presentRecord } from '../domains/present.ts';
import type { PlatformHosts } from '../domains/records.ts';
import type { DomainRow } from '../domains/store.ts';
import { secretsKey } from '../secrets.ts';

const DEFAULT_MANAGED_HOST = 'postwerk.localhost';

export type Flags = Record<string, string | true>;

export class UsageError extends Error {}

function need(flags: Flags, name: string): string {
  const v = flags[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

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

export type CliConfig = Pick<
  Config,
  'MANAGED_DOMAIN_HOST' | 'MANAGED_DKIM_SELECTOR' | 'SECRETS_KEY' | 'SECRETS_KEY_FILE'
> &
  PlatformHosts;

/** `--domain` (an id, or a name: with `--team` when several teams have added it) as a domain row. */
function domainOf(db: Knex, f: Flags): Promise<DomainRow> {
  const team = f.team;
  return findOperatorDomain(db, need(f, 'domain'), typeof team === 'string' ? team : undefined);
}

const domainJson = (d: DomainRow) => ({ id: d.id, name: d.name, team_id: d.team_id, status: d.status });
const ed25519Context = (config: CliConfig) => ({ hosts: config, secrets: secretsKey(config) });

export const commands: Record<string, (db: Knex, flags: Flags, config: CliConfig) => Promise<unknown>> = {
  'team create': (db, f, config) => {
    const name = need(f, 'name');
    if (name.length > 200) throw new UsageError('--name is at most 200 characters');
    return createTeamWithKey(db, name, config.MANAGED_DOMAIN_HOST);
  },
  'team verify-identity': async (db, f) => ({ identity: await verifyIdentity(db, need(f, 'team'), need(f, 'email')) }),
  'team sandbox-lift': async (db, f) => ({ team: teamJson(await liftSandbox(db, need(f, 'team'), need(f, 'region'))) }),
  'team set-rate-limit': async (db, f) => {
    const rps = Number(need(f, 'rps'));
    return { team: teamJson(await setRateLimit(db, need(f, 'team'), rps)) };
  },
  'team set-send-limits': async (db, f) => {
    const limit = (name: string) => {
      const v = f[name];
      if (v === undefined) return undefined;
      if (v === 'none') return null;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1)
        throw new UsageError(`--${name} is a whole number of emails (at least 1) or "none"`);
      return n;
    };
    const daily = limit('daily');
    const monthly = limit('monthly');
    if (daily === undefined && monthly === undefined) throw new UsageError('give --daily and/or --monthly');
    return { team: await setSendLimits(db, need(f, 'team'), { daily, monthly }) };
  },
  'team set-receive-limits': async (db, f) => {
    const limit = (name: string, max: number, what: string) => {
      const v = f[name];
      if (v === undefined) return undefined;
      if (v === 'none') return null;
      const n = Number(v);
      if (!Number.isSafeInteger(n) || n < 1 || n > max)
        throw new UsageError(`--${name} is a whole number of ${what} (1 to ${max}) or "none"`);
      return n;
    };
    const dailyCap = limit('daily-cap', 2_147_483_647, 'messages a day');
    const storageBytes = limit('storage-bytes', Number.MAX_SAFE_INTEGER, 'bytes');
    if (dailyCap === undefined && storageBytes === undefined)
      throw new UsageError('give --daily-cap and/or --storage-bytes');
    return { team: await setReceiveLimits(db, need(f, 'team'), { dailyCap, storageBytes }) };
  },
  'team set-retention': async (db, f) => {
    const days = Number(need(f, 'days'));
    if (!Number.isInteger(days) || days < 1 || days > 3650)
      throw new UsageError('--days is a whole number of days (1 to 3650)');
    return { team: await setRetention(db, need(f, 'team'), days) };
  },
  'team suspend': async (db, f) => ({ team: teamJson(await suspendTeam(db, need(f, 'team'))) }),
  'team unsuspend': async (db, f) => ({ team: teamJson(await unsuspendTeam(db, need(f, 'team'))) }),
  // A second DKIM key, Ed25519 (RFC 8463), whose record the customer publishes; it signs once that verifies.
  'domain add-ed25519-key': async (db, f, config) => {
    const { domain, key, record } = await addEd25519Key(db, (await domainOf(db, f)).id, ed25519Context(config));
    return {
      domain: domainJson(domain),
      key: { selector: key.selector, algorithm: key.algorithm, status: key.status, created_at: iso(key.created_at) },
      record: { ...presentRecord(record), fqdn: `${record.name}.${domain.name}` },
    };
  },
  'domain remove-ed25519-key': async (db, f, config) => {
    const { domain, removed } = await removeEd25519Key(db, (await domainOf(db, f)).id, ed25519Context(config));
    return { domain: domainJson(domain), removed };
  },
  // The record to publish for the managed domains' signatures (d= MANAGED_DOMAIN_HOST); creates the key if absent.
  'managed-dkim': async (db, _f, config) => {
    const key = await ensurePlatformKey(db, secretsKey(config), config);
    return { record: platformDkimRecord(key), created_at: iso(key.created_at) };
  },
};

export function parseArgs(argv: string[]): { command: string; flags: Flags } {
  const words: string[] = [];
  const flags: Flags = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('--')) {
      const [k, inline] = a.slice(2).split(/=(.*)/s, 2);
      if (inline !== undefined) flags[k] = inline;
      else if (argv[i + 1] !== undefined && !argv[i + 1].startsWith('--')) flags[k] = argv[++i];
      else flags[k] = true;
    } else words.push(a);
  }
  return { command: words.join(' '), flags };
}
