// Where a recipient domain's mail goes: MX through DNS_SERVERS (RFC 5321 §5.1 order, implicit MX from A/AAAA,
// RFC 7505 null MX), and the addresses of each MX host through the same resolver (never the system's, so tests
// and private deployments answer from their own DNS). A domain that cannot receive mail is answered with the
// reply a receiving MTA would give, so classify() and its rules decide what it means, like any other reply.
import type { DnsResolver, MxRecord } from '../../shared/dns/resolver.ts';
import { parseReply, type Reply } from '../../shared/bounces/classify.ts';

export type Route =
  | { status: 'mx'; hosts: MxRecord[]; implicit: boolean }
  /** No connection to make: the answer for every recipient of the domain. */
  | { status: 'answer'; reply: Reply };

const answer = (line: string): Route => ({ status: 'answer', reply: parseReply(line)! });

export async function routeDomain(dns: DnsResolver, domain: string): Promise<Route> {
  const found = await dns.resolveMxHosts(domain);
  switch (found.status) {
    case 'ok':
      return { status: 'mx', hosts: found.hosts, implicit: found.implicit };
    case 'null_mx':
      // RFC 7505 §4.2 and its enhanced status code X.1.10.
      return answer(`550 5.1.10 ${domain} publishes a null MX and accepts no mail (RFC 7505)`);
    case 'nxdomain':
      return answer(`550 5.1.2 ${domain} does not exist (NXDOMAIN)`);
    case 'no_mail':
      return answer(`550 5.1.2 ${domain} has no MX and no address record`);
    case 'temporary':
      return answer(`451 4.4.3 DNS lookup of the MX of ${domain} failed for now (${found.error})`);
  }
}

export type HostAddresses =
  { status: 'ok'; addresses: string[] } | { status: 'none' } | { status: 'temporary'; error: string };

/** IPv4 first, then IPv6: every address the host has, in the order to try. */
export async function hostAddresses(dns: DnsResolver, host: string): Promise<HostAddresses> {
  const [a, aaaa] = await Promise.all([dns.a(host), dns.aaaa(host)]);
  const addresses = [...(a.status === 'ok' ? a.records : []), ...(aaaa.status === 'ok' ? aaaa.records : [])];
  if (addresses.length) return { status: 'ok', addresses };
  if (a.status === 'temporary') return a;
  if (aaaa.status === 'temporary') return aaaa;
  return { status: 'none' };
}
