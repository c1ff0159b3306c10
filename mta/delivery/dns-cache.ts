// The delivery's DNS answers kept for a minute: the MX of a recipient domain and the addresses of its hosts. A
// busy destination then costs no lookup per message (Postfix leans on a caching resolver for the same). Answers
// are kept, negative ones too (an NXDOMAIN, no AAAA, a null MX: RFC 2308 caches them as well), a temporary failure
// never: it is asked again next time. A change of MX takes effect within DNS_CACHE_MS; record TTLs are not
// visible through node's resolver, and a minute is below any MX TTL seen in practice.
import type { DnsResolver } from '../../shared/dns/resolver.ts';
import { ttlCache } from './ttl-cache.ts';

export const DNS_CACHE_MS = 60_000;

export function cachingResolver(dns: DnsResolver, ttlMs = DNS_CACHE_MS): DnsResolver {
  const cache = ttlCache<{ status: string }>(ttlMs, (v) => v.status !== 'temporary');
  const cached = <T extends { status: string }>(key: string, lookup: () => Promise<T>) =>
    cache(key, lookup) as Promise<T>;
  return {
    ...dns,
    resolveMxHosts: (domain) => cached(`mx ${domain.toLowerCase()}`, () => dns.resolveMxHosts(domain)),
    a: (name) => cached(`a ${name.toLowerCase()}`, () => dns.a(name)),
    aaaa: (name) => cached(`aaaa ${name.toLowerCase()}`, () => dns.aaaa(name)),
  };
}
