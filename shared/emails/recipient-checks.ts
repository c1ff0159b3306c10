// Can this address receive mail at all? (CONTRACT, Sending: reserved_domain, typo_domain, no_mail,
// dead_address.) A send is refused only when every recipient is unusable; DNS that fails for now never refuses.
import type { Knex } from 'knex';
import type { DnsResolver, MxHostsResult } from '../dns/resolver.ts';
import { isReservedName, type ReservedTld } from '../domains/reserved.ts';

export type Unusable =
  { cause: 'reserved_domain' | 'no_mail' | 'dead_address' } | { cause: 'typo_domain'; suggestion: string };

/** Misspellings of the largest mailbox providers (seen often enough to be worth a suggestion). */
const TYPOS: Record<string, string> = {
  'gmial.com': 'gmail.com',
  'gmai.com': 'gmail.com',
  'gamil.com': 'gmail.com',
  'gmail.co': 'gmail.com',
  'gmaill.com': 'gmail.com',
  'gmail.con': 'gmail.com',
  'gnail.com': 'gmail.com',
  'gmal.com': 'gmail.com',
  'gmail.cm': 'gmail.com',
  'gmail.om': 'gmail.com',
  'hotmial.com': 'hotmail.com',
  'hotmai.com': 'hotmail.com',
  'hotmail.co': 'hotmail.com',
  'hotmail.con': 'hotmail.com',
  'hotmal.com': 'hotmail.com',
  'yaho.com': 'yahoo.com',
  'yahooo.com': 'yahoo.com',
  'yahoo.co': 'yahoo.com',
  'yahoo.con': 'yahoo.com',
  'yhoo.com': 'yahoo.com',
  'outlok.com': 'outlook.com',
  'outloo.com': 'outlook.com',
  'outlook.co': 'outlook.com',
  'outlook.con': 'outlook.com',
  'iclod.com': 'icloud.com',
  'icloud.co': 'icloud.com',
  'icloud.con': 'icloud.com',
  'iclould.com': 'icloud.com',
  'protonmal.com': 'protonmail.com',
  'aol.co': 'aol.com',
};

const MX_CACHE_MS = 5 * 60_000;
const mxCaches = new WeakMap<DnsResolver, Map<string, { at: number; result: Promise<MxHostsResult> }>>();

/** MX answers are cached for a few minutes per resolver: a send to a busy domain costs no lookup. */
function cachedMx(dns: DnsResolver, domain: string, now: number): Promise<MxHostsResult> {
  let cache = mxCaches.get(dns);
  if (!cache) mxCaches.set(dns, (cache = new Map()));
  const hit = cache.get(domain);
  if (hit && now - hit.at < MX_CACHE_MS) return hit.result;
  const result = dns.resolveMxHosts(domain);
  cache.set(domain, { at: now, result });
  // A temporary failure is not worth remembering.
  result.then(
    (r) => r.status === 'temporary' && cache.delete(domain),
    () => cache.delete(domain),
  );
  if (cache.size > 10_000) cache.delete(cache.keys().next().value!);
  return result;
}

export interface RecipientRules {
  /** Domains no check applies to (the simulator's). */
  exempt: (domain: string) => boolean;
  /** RESERVED_TLDS_ALLOWED: recipients under these reserved TLDs are checked as any other (their MX looked up). */
  reservedAllowed: readonly ReservedTld[];
}

/**
 * For each address, why it cannot receive mail; usable ones are absent from the map. `dead`: the platform-wide
 * hard bounces among the addresses when the caller has read them already (rules.ts senderLookups).
 */
export async function findUnusable(
  db: Knex,
  dns: DnsResolver,
  addresses: { address: string; domain: string }[],
  rules: RecipientRules,
  dead?: Set<string>,
): Promise<Map<string, Unusable>> {
  const out = new Map<string, Unusable>();
  const lookups = new Map<string, Promise<MxHostsResult>>();
  const now = Date.now();
  for (const { address, domain } of addresses) {
    if (rules.exempt(domain)) continue;
    if (isReservedName(domain, rules.reservedAllowed)) out.set(address, { cause: 'reserved_domain' });
    else if (TYPOS[domain]) out.set(address, { cause: 'typo_domain', suggestion: TYPOS[domain] });
    else if (!lookups.has(domain)) lookups.set(domain, cachedMx(dns, domain, now));
  }
  const results = new Map<string, MxHostsResult>();
  for (const [domain, p] of lookups) results.set(domain, await p);
  for (const { address, domain } of addresses) {
    const r = results.get(domain);
    if (r && (r.status === 'null_mx' || r.status === 'no_mail' || r.status === 'nxdomain'))
      out.set(address, { cause: 'no_mail' });
  }
  const candidates = addresses.map((a) => a.address).filter((a) => !out.has(a));
  if (candidates.length) {
    // The platform-wide hard-bounce list: an address that hard-bounced for any team.
    const bounced = dead
      ? candidates.filter((a) => dead.has(a))
      : (await db('suppressions').whereIn('email', candidates).where({ origin: 'bounce' }).distinct('email')).map(
          (r: { email: string }) => r.email,
        );
    for (const email of bounced) out.set(email, { cause: 'dead_address' });
  }
  return out;
}
