// Domain names and labels as customers type them: IDNA to ASCII, lower case, no trailing dot; a name must be
// registrable below a public suffix (no `com`, no `co.uk`) and not a reserved name (RFC 2606, RFC 6761) unless
// the operator allowed its TLD (RESERVED_TLDS_ALLOWED).
import { domainToASCII } from 'node:url';
import { isIP } from 'node:net';
import { getPublicSuffix } from 'tldts';
import { ServiceError } from '../errors.ts';
import { isReservedName, type ReservedTld } from './reserved.ts';

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

function invalid(field: string, message: string): ServiceError {
  return new ServiceError('validation_error', message, { errors: [{ path: field, message }] });
}

/**
 * The ASCII form of a domain name, or a 422 naming what is wrong with it (`field`). `reservedAllowed`: the
 * reserved TLDs the operator allowed (config RESERVED_TLDS_ALLOWED).
 */
export function normalizeDomainName(input: string, reservedAllowed: readonly ReservedTld[], field = 'name'): string {
  const trimmed = input.trim().replace(/\.$/, '');
  if (trimmed === '') throw invalid(field, 'The domain name is empty.');
  if (isIP(trimmed) || isIP(trimmed.replace(/^\[|\]$/g, '')))
    throw invalid(field, 'An IP address is not a domain name.');
  if (trimmed.length > 253) throw invalid(field, 'A domain name is at most 253 characters.');
  if (/[\s/:@?#\\]/.test(trimmed))
    throw invalid(field, 'A domain name has no spaces, slashes, ports or addresses in it.');
  const ascii = domainToASCII(trimmed);
  if (!ascii) throw invalid(field, 'The domain name is not a valid internationalised domain name.');
  if (ascii.length > 253) throw invalid(field, 'A domain name is at most 253 characters (in its ASCII form).');
  const labels = ascii.split('.');
  for (const label of labels) {
    if (label.length === 0) throw invalid(field, 'A domain name has no empty labels.');
    if (label.length > 63) throw invalid(field, `The label \`${label.slice(0, 20)}…\` is longer than 63 characters.`);
    if (!LABEL.test(label))
      throw invalid(field, `The label \`${label}\` may hold only letters, digits and inner hyphens.`);
  }
  if (labels.length < 2) throw invalid(field, 'A domain name has at least two labels.');
  if (isReservedName(ascii, reservedAllowed)) {
    throw invalid(field, `\`${ascii}\` is a reserved name (RFC 2606, RFC 6761) and cannot receive or send mail.`);
  }
  if (/^\d+$/.test(labels.at(-1)!)) throw invalid(field, 'A top-level domain is never all digits.');
  const suffix = getPublicSuffix(ascii, { allowPrivateDomains: true });
  if (!suffix || suffix === ascii)
    throw invalid(field, `\`${ascii}\` is a public suffix; add the domain you own under it.`);
  return ascii;
}

/** A single DNS label as used for custom_return_path, tracking_subdomain and receiving_host. */
export function normalizeLabel(input: string, field: string): string {
  const label = input.trim().toLowerCase();
  if (!LABEL.test(label))
    throw invalid(
      field,
      `\`${field}\` must be one DNS label: letters, digits and inner hyphens, at most 63 characters.`,
    );
  return label;
}

/** The fully qualified name of a record published at `name` ('@' is the domain itself). */
export function fqdn(name: string, domain: string): string {
  return name === '@' ? domain : `${name}.${domain}`;
}
