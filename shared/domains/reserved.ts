// Names that never receive or send mail on the public internet (RFC 2606, RFC 6761, RFC 9476 `.alt`, the
// `.internal` TLD): refused as a team's domain and reported as `reserved_domain` as a recipient, unless the
// operator allowed their TLD (RESERVED_TLDS_ALLOWED: a test rig or a private network with its own DNS).

export const RESERVED_TLDS = [
  'test',
  'example',
  'invalid',
  'localhost',
  'local',
  'onion',
  'arpa',
  'internal',
  'alt',
] as const;
export type ReservedTld = (typeof RESERVED_TLDS)[number];

const TLDS = new Set<string>(RESERVED_TLDS);
const RESERVED_NAMES = new Set(['example.com', 'example.net', 'example.org']);

/**
 * True for a name under a reserved TLD or one of the reserved example second-level names (ASCII, lower case);
 * a name under a TLD of `allowed` is ordinary.
 */
export function isReservedName(domain: string, allowed: readonly ReservedTld[] = []): boolean {
  const labels = domain.split('.');
  const tld = labels.at(-1)!;
  if (TLDS.has(tld)) return !(allowed as readonly string[]).includes(tld);
  return RESERVED_NAMES.has(labels.slice(-2).join('.'));
}
