// What a DNS answer means for one desired record: pure functions, one per record type. "Verified" needs an
// exact match; anything partial, extra or ambiguous is "wrong", and a failed lookup is "temporary".
import type { DesiredRecord } from './records.ts';

export type Lookup<T> =
  | { status: 'ok'; records: T[] }
  | { status: 'nxdomain' }
  | { status: 'nodata' }
  | { status: 'temporary'; error: string };
export type CnameLookup =
  | { status: 'ok'; chain: string[]; target: string }
  | { status: 'nxdomain' }
  | { status: 'nodata' }
  | { status: 'temporary'; error: string };

export interface Mx {
  exchange: string;
  priority: number;
}

export interface Caa {
  critical: number;
  issue?: string;
  issuewild?: string;
  iodef?: string;
}

export type Verdict =
  | { result: 'verified' | 'missing' | 'wrong'; found: string | null }
  | { result: 'temporary'; found: null; error: string };

const host = (h: string) => h.toLowerCase().replace(/\.$/, '');

function settled<T>(lookup: Lookup<T> | CnameLookup, onOk: () => Verdict): Verdict {
  if (lookup.status === 'temporary') return { result: 'temporary', found: null, error: lookup.error };
  if (lookup.status !== 'ok') return { result: 'missing', found: null };
  return onOk();
}

/** Every MX at the name points at our host with our priority: mail for it can reach nobody else. */
export function verdictMx(want: DesiredRecord, lookup: Lookup<Mx>): Verdict {
  return settled(lookup, () => {
    const records = (lookup as { records: Mx[] }).records;
    const found = records.map((r) => `${r.priority} ${host(r.exchange)}`).join(', ');
    const exact =
      records.length > 0 && records.every((r) => host(r.exchange) === host(want.value) && r.priority === want.priority);
    return { result: exact ? 'verified' : 'wrong', found };
  });
}

/** SPF (RFC 7208 §4.5): exactly one `v=spf1` record at the name, equal to ours. */
export function verdictSpf(want: DesiredRecord, lookup: Lookup<string>): Verdict {
  return settled(lookup, () => {
    const spf = (lookup as { records: string[] }).records.filter((r) => /^v=spf1(\s|$)/i.test(r.trim()));
    if (spf.length === 0) return { result: 'missing', found: null };
    const exact = spf.length === 1 && spf[0].trim().replace(/\s+/g, ' ') === want.value;
    return { result: exact ? 'verified' : 'wrong', found: spf.join(' | ') };
  });
}

function dkimTags(text: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    tags.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).replace(/\s+/g, ''));
  }
  return tags;
}

/** DKIM key record (RFC 6376 §3.6.1): one record at the selector, same key, no contradicting v= or k=. */
export function verdictDkim(want: DesiredRecord, lookup: Lookup<string>): Verdict {
  return settled(lookup, () => {
    const records = (lookup as { records: string[] }).records;
    const wanted = dkimTags(want.value);
    const found = records.join(' | ');
    if (records.length !== 1) return { result: 'wrong', found };
    const tags = dkimTags(records[0]);
    const ok =
      tags.get('p') === wanted.get('p') &&
      (!tags.has('v') || tags.get('v') === 'DKIM1') &&
      (!tags.has('k') || tags.get('k') === wanted.get('k'));
    return { result: ok ? 'verified' : 'wrong', found };
  });
}

/** The tracking name's CNAME chain reaches our tracking host (chains followed to a bounded depth). */
export function verdictCname(want: DesiredRecord, lookup: CnameLookup): Verdict {
  return settled(lookup, () => {
    const { chain, target } = lookup as { chain: string[]; target: string };
    const hops = [...chain, target].map(host);
    return { result: hops.includes(host(want.value)) ? 'verified' : 'wrong', found: hops.join(' -> ') };
  });
}

/** CAA (RFC 8659): no CAA at all lets any CA issue; otherwise an `issue` tag must name our CA. */
export function verdictCaa(want: DesiredRecord, lookup: Lookup<Caa>): Verdict {
  if (lookup.status === 'nxdomain' || lookup.status === 'nodata') return { result: 'verified', found: null };
  return settled(lookup, () => {
    const records = (lookup as { records: Caa[] }).records;
    const issuer = /"([^"]+)"/.exec(want.value)?.[1] ?? '';
    const issuers = records
      .filter((r) => r.issue !== undefined)
      .map((r) => (r.issue ?? '').split(';')[0].trim().toLowerCase());
    const found = records
      .map((r) =>
        Object.entries(r)
          .filter(([k]) => k !== 'critical')
          .map(([k, v]) => `${r.critical} ${k} "${v}"`)
          .join(''),
      )
      .join(', ');
    if (issuers.length === 0) return { result: 'verified', found };
    return { result: issuers.includes(issuer) ? 'verified' : 'wrong', found };
  });
}

/**
 * BIMI assertion record (draft-brand-indicators-for-message-identification §4.2, §7.3): exactly one `v=BIMI1`
 * record at `default._bimi`, whose `l=` names our logo. An `a=` the customer added (a certificate of their own)
 * does not make it wrong.
 */
export function verdictBimi(want: DesiredRecord, lookup: Lookup<string>): Verdict {
  return settled(lookup, () => {
    const bimi = (lookup as { records: string[] }).records.filter((r) => /^v=BIMI1\s*(;|$)/i.test(r.trim()));
    if (bimi.length === 0) return { result: 'missing', found: null };
    const logo = (text: string) => /(?:^|;)\s*l=([^;]*)/i.exec(text)?.[1].trim();
    const exact = bimi.length === 1 && logo(bimi[0]) === logo(want.value);
    return { result: exact ? 'verified' : 'wrong', found: bimi.join(' | ') };
  });
}
