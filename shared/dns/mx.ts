// Where mail for a domain goes: RFC 5321 §5.1 (MX order, implicit MX) and RFC 7505 (null MX).
import { normaliseName, type DnsResult, type MxRecord } from './types.ts';

export type MxHostsResult =
  /** `implicit`: the domain has no MX and its own A/AAAA stand in (RFC 5321 §5.1). */
  | { status: 'ok'; hosts: MxRecord[]; implicit: boolean }
  /** RFC 7505: the domain declares it accepts no mail; a permanent answer. */
  | { status: 'null_mx' }
  /** Neither MX nor address: nowhere to deliver. */
  | { status: 'no_mail' }
  | { status: 'nxdomain' }
  | { status: 'temporary'; error: string };

export interface MxLookups {
  mx(name: string): Promise<DnsResult<MxRecord>>;
  a(name: string): Promise<DnsResult<string>>;
  aaaa(name: string): Promise<DnsResult<string>>;
}

/**
 * Lowest preference first; equal preferences in random order, so senders spread over a domain's equal MXs
 * (RFC 5321 §5.1 "SHOULD randomize"). A host listed twice keeps its first (most preferred) place.
 */
export function orderMx(records: MxRecord[], random: () => number = Math.random): MxRecord[] {
  const byPriority = new Map<number, MxRecord[]>();
  for (const r of records) byPriority.set(r.priority, [...(byPriority.get(r.priority) ?? []), r]);
  const ordered: MxRecord[] = [];
  for (const priority of [...byPriority.keys()].sort((x, y) => x - y)) {
    const group = byPriority.get(priority) ?? [];
    // Fisher-Yates.
    for (let i = group.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [group[i], group[j]] = [group[j], group[i]];
    }
    ordered.push(...group);
  }
  return ordered.filter((r, i) => ordered.findIndex((o) => o.exchange === r.exchange) === i);
}

export async function resolveMxHosts(
  dns: MxLookups,
  domain: string,
  random: () => number = Math.random,
): Promise<MxHostsResult> {
  const name = normaliseName(domain);
  const mx = await dns.mx(name);
  if (mx.status === 'nxdomain' || mx.status === 'temporary') return mx;
  if (mx.status === 'ok') {
    // RFC 7505 §3: a null MX (exchange ".", which c-ares gives as "") must stand alone. One that does not is a
    // publishing mistake; the real hosts beside it still take mail, and "." is nobody to connect to.
    const hosts = mx.records.filter((r) => r.exchange !== '');
    if (hosts.length === 0) return { status: 'null_mx' };
    return { status: 'ok', hosts: orderMx(hosts, random), implicit: false };
  }
  // RFC 5321 §5.1: no MX records, so the domain itself is the host, at preference 0, if it has an address.
  const [a, aaaa] = await Promise.all([dns.a(name), dns.aaaa(name)]);
  if (a.status === 'ok' || aaaa.status === 'ok')
    return { status: 'ok', hosts: [{ exchange: name, priority: 0 }], implicit: true };
  // An address we could not look up may exist: only two clear negatives mean "no mail".
  if (a.status === 'temporary') return a;
  if (aaaa.status === 'temporary') return aaaa;
  return { status: 'no_mail' };
}
