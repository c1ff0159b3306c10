// A team that can send: a domain verified against the loopback DNS server, optionally out of the sandbox; the
// platform and DNS server such teams send through.
import { startPlatform, type Platform, type TestTeam } from './platform.ts';
import { startDnsServer, type DnsServer } from './dns-server.ts';
import { publishRecords } from './domain-records.ts';
import { checkDomain } from '../../shared/domains/verify.ts';
import { liftSandbox } from '../../shared/teams/teams.ts';

export interface SendingTeam extends TestTeam {
  domain: string;
  domainId: string;
}

let counter = 0;

/**
 * A domain `name` of the team created through the API, its records published in `dns` and verified for real; its id.
 */
export async function verifiedDomain(
  p: Platform,
  dns: DnsServer,
  team: TestTeam,
  name: string,
  region = 'us-east-1',
): Promise<string> {
  const res = await p.request('POST', '/domains', { key: team.key, body: { name, region } });
  if (res.status !== 201) throw new Error(`POST /domains: ${res.status} ${res.text}`);
  publishRecords(dns, name, res.body.records);
  const checked = await checkDomain(p.db, p.deps.dns, p.config, res.body.id);
  if (checked?.status !== 'verified') throw new Error(`domain ${name} did not verify: ${checked?.status}`);
  return res.body.id;
}

export async function sendingTeam(
  p: Platform,
  dns: DnsServer,
  options: { sandbox?: boolean; region?: string } = {},
): Promise<SendingTeam> {
  const team = await p.createTeam();
  const domain = `sender-${process.pid}-${++counter}.test`;
  const region = options.region ?? 'us-east-1';
  const domainId = await verifiedDomain(p, dns, team, domain, region);
  if (options.sandbox !== true) await liftSandbox(p.db, team.id, region);
  return { ...team, domain, domainId };
}

/** A recipient domain that accepts mail (an MX in the loopback DNS). */
export function mailDomain(dns: DnsServer, domain: string): string {
  dns.set(domain, 'MX', [{ exchange: `mx.${domain}`, priority: 10 }]);
  dns.set(`mx.${domain}`, 'A', ['127.0.0.1']);
  return domain;
}

export interface SendingWorld {
  p: Platform;
  dns: DnsServer;
  close(): Promise<void>;
}

/**
 * The api on a platform that resolves through its own loopback DNS server (`env` on top of its configuration), where
 * each of `recipients` is a domain that accepts mail.
 */
export async function startSendingWorld(recipients: string[], env: Record<string, string> = {}): Promise<SendingWorld> {
  const dns = await startDnsServer();
  let p: Platform;
  try {
    p = await startPlatform({ DNS_SERVERS: dns.address, ...env });
  } catch (err) {
    await dns.close();
    throw err;
  }
  for (const domain of recipients) mailDomain(dns, domain);
  return {
    p,
    dns,
    async close() {
      await p.close();
      await dns.close();
    },
  };
}
