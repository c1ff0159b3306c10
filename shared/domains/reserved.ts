// Names that never receive or send mail on the public internet (RFC 2606, RFC 6761, RFC 9476 `.alt`, the
// `.internal` TLD): refused as a team's domain and reported as `reserved_domain` as a recipient.

const RESERVED_TLDS = new Set(['test', 'example', 'invalid', 'localhost', 'local', 'onion', 'arpa', 'internal', 'alt']);
const RESERVED_NAMES = new Set(['example.com', 'example.net', 'example.org']);

/** True for a name under a reserved TLD or one of the reserved example second-level names (ASCII, lower case). */
export function isReservedName(domain: string): boolean {
  const labels = domain.split('.');
  return RESERVED_TLDS.has(labels.at(-1)!) || RESERVED_NAMES.has(labels.slice(-2).join('.'));
}
