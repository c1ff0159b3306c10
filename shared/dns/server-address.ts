// Where a customer-named server really is, and whether we may talk to it. A name is resolved first and every
// address checked, and the caller connects to the checked address, so neither an IP literal nor a name that
// resolves (or rebinds) to a private, loopback or link-local address turns our api into a probe of the
// platform's own network (SSRF). DNS_UPDATE_ALLOW_PRIVATE lifts the check for private deployments and tests.
import { BlockList, isIP } from 'node:net';
import type { DnsResult } from './types.ts';

export interface AddressResolver {
  a(name: string): Promise<DnsResult<string>>;
  aaaa(name: string): Promise<DnsResult<string>>;
}

export type ServerAddresses =
  | { status: 'ok'; addresses: string[] }
  | { status: 'private'; addresses: string[] }
  | { status: 'not_found'; error: string };

// IANA special-purpose registries (RFC 6890 and its updates): nothing here is a customer's public server.
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

/** True for an address on the public internet. An IPv4-mapped IPv6 address is judged by its IPv4 part. */
export function isPublicAddress(ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return isPublicAddress(mapped[1]);
  const family = isIP(ip);
  if (family === 0) return false;
  return !blocked.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/** The addresses of `host` (an IP or a name), IPv4 first; `private` when any of them is not public. */
export async function resolveServer(
  resolver: AddressResolver,
  host: string,
  allowPrivate: boolean,
): Promise<ServerAddresses> {
  const literal = host.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  if (isIP(literal)) {
    addresses = [literal];
  } else {
    const [v4, v6] = await Promise.all([resolver.a(host), resolver.aaaa(host)]);
    addresses = [...(v4.status === 'ok' ? v4.records : []), ...(v6.status === 'ok' ? v6.records : [])];
    if (addresses.length === 0) {
      const failed = [v4, v6].find((r) => r.status === 'temporary');
      return {
        status: 'not_found',
        error: failed?.status === 'temporary' ? `lookup failed (${failed.error})` : 'no A or AAAA record',
      };
    }
  }
  // One private address among public ones refuses the whole name: we would not know which one we reach.
  if (!allowPrivate && addresses.some((a) => !isPublicAddress(a))) return { status: 'private', addresses };
  return { status: 'ok', addresses };
}
