// The world of the domain-claim tests: a platform resolving through a loopback DNS server, a holder team that
// verified its domain as a customer does, and the claim calls the tests make.
import { startPlatform, type Platform, type TestTeam } from './platform.ts';
import { startDnsServer, type DnsServer } from './dns-server.ts';
import { publishRecords, type ApiRecord } from './domain-records.ts';
import { checkDomain } from '../../shared/domains/verify.ts';

export const DAY = 24 * 3600_000;

export interface ClaimWorld {
  p: Platform;
  dns: DnsServer;
  /** Publishes the domain's MX and TXT records of the API's record list. */
  publish(domain: string, records: ApiRecord[]): void;
  /** Moves every trace of the holder's use of its domain two days back: past the grace period and activity window. */
  age(domainId: string): Promise<void>;
  /** A team holding `name`, verified through its DNS records the way a customer gets there (aged unless told). */
  holder(name: string, options?: { aged?: boolean }): Promise<{ team: TestTeam; id: string; records: ApiRecord[] }>;
  /** POST /domains/claim, which must answer 201; the claim. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  claim(team: TestTeam, body: Record<string, unknown>): Promise<any>;
  /** The claim's proof published (or `values` at its name instead). */
  publishProof(c: { name: string; record: ApiRecord }, values?: string[]): void;
  verify(team: TestTeam, domainId: string): ReturnType<Platform['request']>;
  get(team: TestTeam, domainId: string): ReturnType<Platform['request']>;
  close(): Promise<void>;
}

export async function startClaimWorld(): Promise<ClaimWorld> {
  const dns = await startDnsServer();
  const p = await startPlatform({ DNS_SERVERS: dns.address }).catch(async (err) => {
    await dns.close();
    throw err;
  });
  const publish = (domain: string, records: ApiRecord[]) => publishRecords(dns, domain, records);
  const age = async (domainId: string) => {
    const then = new Date(Date.now() - 2 * DAY);
    await p.db('domains').where({ id: domainId }).update({ created_at: then, verified_at: then, updated_at: then });
    const domain = await p.db('domains').where({ id: domainId }).first();
    await p.db('request_logs').where({ team_id: domain.team_id }).update({ created_at: then });
  };
  return {
    p,
    dns,
    publish,
    age,
    async holder(name, { aged = true } = {}) {
      const team = await p.createTeam('Holder');
      const res = await p.request('POST', '/domains', { key: team.key, body: { name } });
      if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
      publish(name, res.body.records);
      const checked = await checkDomain(p.db, p.deps.dns, p.config, res.body.id);
      if (checked?.status !== 'verified') throw new Error(`holder domain not verified: ${checked?.status}`);
      if (aged) await age(res.body.id);
      return { team, id: res.body.id, records: res.body.records };
    },
    async claim(team, body) {
      const res = await p.request('POST', '/domains/claim', { key: team.key, body });
      if (res.status !== 201) throw new Error(`claim failed: ${res.status} ${res.text}`);
      return res.body;
    },
    publishProof: (c, values = [c.record.value]) => dns.set(`${c.record.name}.${c.name}`, 'TXT', values),
    verify: (team, domainId) => p.request('POST', `/domains/${domainId}/claim/verify`, { key: team.key }),
    get: (team, domainId) => p.request('GET', `/domains/${domainId}/claim`, { key: team.key }),
    async close() {
      await p.close();
      await dns.close();
    },
  };
}
