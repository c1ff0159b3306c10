// Operator commands on domains and the platform's own DKIM key.
import type { Knex } from 'knex';
import { addEd25519Key, findOperatorDomain, removeEd25519Key } from '../domains/ed25519.ts';
import { ensurePlatformKey, platformDkimRecord } from '../domains/platform-dkim.ts';
import { presentRecord } from '../domains/present.ts';
import type { DomainRow } from '../domains/store.ts';
import { secretsKey } from '../secrets.ts';
import { iso } from '../time.ts';
import { need, type CliConfig, type Command, type Flags } from './command.ts';

/** `--domain` (an id, or a name: with `--team` when several teams have added it) as a domain row. */
function domainOf(db: Knex, f: Flags): Promise<DomainRow> {
  const team = f.team;
  return findOperatorDomain(db, need(f, 'domain'), typeof team === 'string' ? team : undefined);
}

const domainJson = (d: DomainRow) => ({ id: d.id, name: d.name, team_id: d.team_id, status: d.status });
const ed25519Context = (config: CliConfig) => ({ hosts: config, secrets: secretsKey(config) });
const domainFlags = {
  domain: { help: 'the domain: its id, or its name', required: true, value: 'ID|NAME' },
  team: { help: 'the team id, when several teams have added the name', value: 'ID' },
};

export const domainCommands: Record<string, Command> = {
  'domain add-ed25519-key': {
    summary: 'a second DKIM key, Ed25519 (RFC 8463), and its record to publish; it signs once the record verifies',
    flags: domainFlags,
    run: async (db, f, config) => {
      const { domain, key, record } = await addEd25519Key(db, (await domainOf(db, f)).id, ed25519Context(config));
      return {
        domain: domainJson(domain),
        key: { selector: key.selector, algorithm: key.algorithm, status: key.status, created_at: iso(key.created_at) },
        record: { ...presentRecord(record), fqdn: `${record.name}.${domain.name}` },
      };
    },
  },
  'domain remove-ed25519-key': {
    summary: "stops the Ed25519 signature, retires the key and drops its record from the domain's records",
    flags: domainFlags,
    run: async (db, f, config) => {
      const { domain, removed } = await removeEd25519Key(db, (await domainOf(db, f)).id, ed25519Context(config));
      return { domain: domainJson(domain), removed };
    },
  },
  'managed-dkim': {
    summary: "the TXT record to publish for the managed domains' DKIM key (d= MANAGED_DOMAIN_HOST); makes the key",
    flags: {},
    run: async (db, _f, config) => {
      const key = await ensurePlatformKey(db, secretsKey(config), config);
      return { record: platformDkimRecord(key), created_at: iso(key.created_at) };
    },
  },
};
