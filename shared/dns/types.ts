// The values a DNS lookup answers with, shared by the resolver and what is built on it.

export type DnsFailure = { status: 'nxdomain' } | { status: 'nodata' } | { status: 'temporary'; error: string };
/** `ok` always carries at least one record; an empty answer is `nodata`. */
export type DnsResult<T> = { status: 'ok'; records: T[] } | DnsFailure;
/** `chain` holds the aliases walked (the queried name first), `target` the name that is no alias. */
export type CnameResult = { status: 'ok'; chain: string[]; target: string } | DnsFailure;

export interface MxRecord {
  /** Lowercase, no trailing dot; '' for the null MX of RFC 7505. */
  exchange: string;
  priority: number;
}
/** As node gives it: `critical` is the flags octet (128 = issuer critical), the tag (lowercased) is the key. */
export type { CaaRecord } from 'node:dns';

export const normaliseName = (name: string) => name.trim().toLowerCase().replace(/\.$/, '');
