// DNS lookups as values. Each answer is ok / nxdomain / nodata / temporary and nothing a server does makes a
// lookup throw, so a caller decides between "published", "absent" and "ask again later" without try/catch.
// Built on node's c-ares resolver with the servers of DNS_SERVERS (empty: the system's resolv.conf).
import { promises as dns, type CaaRecord, type MxRecord as NodeMxRecord } from 'node:dns';
import { resolveMxHosts, type MxHostsResult } from './mx.ts';
import { normaliseName, type CnameResult, type DnsFailure, type DnsResult, type MxRecord } from './types.ts';

export * from './types.ts';
export { resolveMxHosts, orderMx, type MxHostsResult, type MxLookups } from './mx.ts';

export interface DnsResolver {
  /** Each record's character-strings joined with nothing between them (RFC 7208 §3.3, RFC 6376 §3.6.2.2). */
  txt(name: string): Promise<DnsResult<string>>;
  mx(name: string): Promise<DnsResult<MxRecord>>;
  /** The alias target, lowercase without trailing dot. */
  cname(name: string): Promise<DnsResult<string>>;
  a(name: string): Promise<DnsResult<string>>;
  aaaa(name: string): Promise<DnsResult<string>>;
  caa(name: string): Promise<DnsResult<CaaRecord>>;
  /** The names of a reverse-lookup name (`4.3.2.1.in-addr.arpa`), lowercase without trailing dot. */
  ptr(name: string): Promise<DnsResult<string>>;
  followCname(name: string, maxHops?: number): Promise<CnameResult>;
  /** Where mail for a domain goes (RFC 5321 §5.1, RFC 7505), in the order to try. */
  resolveMxHosts(domain: string): Promise<MxHostsResult>;
}

export interface ResolverOptions {
  /** DNS_SERVERS entries: `ip`, `ip:port`, `[ipv6]:port`. Empty: the system resolver. */
  servers: string[];
  /** Wait for one answer from one server. */
  timeoutMs?: number;
  /** Attempts per server. */
  tries?: number;
}

export const CNAME_CHAIN_TOO_LONG = 'cname chain too long';

const NXDOMAIN: DnsFailure = { status: 'nxdomain' };
const NODATA: DnsFailure = { status: 'nodata' };

/**
 * node's codes for a failed query (doc/api/dns.md "Error codes"), each given its meaning deliberately.
 * Codes only getaddrinfo produces (EBADFAMILY, EBADFLAGS, EBADHINTS, ENONAME, ELOADIPHLPAPI,
 * EADDRGETNETWORKPARAMS) and internal ones (EBADQUERY, EBADSTR, ENOMEM, EFILE, ENOTINITIALIZED) say nothing
 * about the name either, so they and any code added later are temporary: a later try may succeed.
 */
export function classifyDnsError(err: unknown): DnsFailure {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  // Not a DNS outcome (a TypeError, node's ERR_INVALID_ARG_*): a bug in our call, surfaced.
  if (typeof code !== 'string' || code.startsWith('ERR_')) throw err;
  switch (code) {
    case 'ENOTFOUND': // RCODE 3, NXDOMAIN: the name does not exist.
      return NXDOMAIN;
    case 'ENODATA': // NOERROR without a record of the type: the name exists, the record does not.
      return NODATA;
    case 'EBADNAME': // Not a host name DNS can carry (empty label, label over 63 octets, space): it cannot exist.
      return NXDOMAIN;
    case 'ESERVFAIL': // RCODE 2: the server could not answer (a broken delegation, DNSSEC failure upstream).
    case 'EREFUSED': // RCODE 5: policy, or not authoritative and not recursive for us.
    case 'ENOTIMP': // RCODE 4: this server does not do that query; another might.
    case 'EFORMERR': // RCODE 1: the server did not understand our query.
    case 'ETIMEOUT': // No answer within the tries (a spoofed id is ignored, so it ends here too).
    case 'ECONNREFUSED': // ICMP port unreachable or TCP RST: nobody listens.
    case 'EOF': // The TCP connection closed before the answer.
    case 'EBADRESP': // A malformed answer: never trusted as an answer.
    case 'ECANCELLED': // resolver.cancel().
    case 'EDESTRUCTION': // The channel is being torn down.
    default:
      return { status: 'temporary', error: code };
  }
}

export function createResolver(options: ResolverOptions): DnsResolver {
  const timeoutMs = options.timeoutMs ?? 3000;
  const tries = options.tries ?? 2;
  const resolver = new dns.Resolver({ timeout: timeoutMs, tries });
  if (options.servers.length) resolver.setServers(options.servers);
  // c-ares doubles the wait with each round over the servers and node checks its timers at most once a second,
  // so 3 s × 2 tries can take 9 s on one server. The whole lookup gets timeout × tries per server, no more.
  const budgetMs = timeoutMs * tries * Math.max(1, resolver.getServers().length);

  function lookup<R, T>(query: (name: string) => Promise<R[]>, map: (r: R) => T) {
    return async (name: string): Promise<DnsResult<T>> => {
      const qname = normaliseName(name);
      // '' would ask about the root zone.
      if (!qname) return NXDOMAIN;
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(Object.assign(new Error('lookup budget spent'), { code: 'ETIMEOUT' })),
          budgetMs,
        );
      });
      try {
        // The race keeps a handler on the abandoned query, so its late rejection is not unhandled.
        const records = await Promise.race([query.call(resolver, qname), deadline]);
        return records.length ? { status: 'ok', records: records.map(map) } : NODATA;
      } catch (err) {
        return classifyDnsError(err);
      } finally {
        clearTimeout(timer);
      }
    };
  }

  const cname = lookup(resolver.resolveCname, normaliseName);
  const a = lookup(resolver.resolve4, (r: string) => r);
  const aaaa = lookup(resolver.resolve6, (r: string) => r);
  const mx = lookup(resolver.resolveMx, (r: NodeMxRecord): MxRecord => ({
    exchange: normaliseName(r.exchange),
    priority: r.priority,
  }));

  async function followCname(name: string, maxHops = 8): Promise<CnameResult> {
    const chain: string[] = [];
    let current = normaliseName(name);
    for (;;) {
      const res = await cname(current);
      if (res.status === 'nodata') return { status: 'ok', chain, target: current };
      // nxdomain at a later hop: the chain dangles, and the last name decides the answer (RFC 6604 §3).
      if (res.status !== 'ok') return res;
      chain.push(current);
      const next = res.records[0];
      if (chain.includes(next) || chain.length > maxHops) return { status: 'temporary', error: CNAME_CHAIN_TOO_LONG };
      current = next;
    }
  }

  return {
    txt: lookup(resolver.resolveTxt, (chunks: string[]) => chunks.join('')),
    mx,
    cname,
    a,
    aaaa,
    caa: lookup(
      resolver.resolveCaa,
      (r: CaaRecord): CaaRecord =>
        Object.fromEntries(Object.entries(r).map(([k, v]) => [k.toLowerCase(), v])) as unknown as CaaRecord,
    ),
    ptr: lookup(resolver.resolvePtr, normaliseName),
    followCname,
    resolveMxHosts: (domain) => resolveMxHosts({ mx, a, aaaa }, domain),
  };
}
