// What signing a message for a sending domain needs (the domain's name and return-path label for the envelope,
// its active DKIM keys opened), kept for a few seconds per domain: a busy domain then costs no query and no key
// unsealing per message. A key activated, retired or rotated, or a domain deleted, takes effect within the TTL
// (DOMAIN_CACHE_MS); DNS keeps a retired key's record far longer than that, so a signature made in that window
// still verifies. A managed domain has no keys of its own: it signs with the platform key (`d=`
// MANAGED_DOMAIN_HOST, shared/domains/platform-dkim.ts), opened once per TTL for all the managed domains.
import type { Knex } from 'knex';
import type { ManagedDkimConfig } from '../../shared/domains/platform-dkim.ts';
import { platformSigningKey, signingKeys, type SigningKey } from './sign.ts';
import type { SendingDomain } from './envelope.ts';
import { ttlCache } from './ttl-cache.ts';

export const DOMAIN_CACHE_MS = 10_000;

export interface SigningDomain {
  domain: SendingDomain;
  keys: SigningKey[];
}

export interface SigningDomains {
  /** The domain and its keys; null when the domain no longer exists. */
  get(domainId: string): Promise<SigningDomain | null>;
}

/** `managedDkim`: the platform key's host and selector, which every managed domain signs with. */
export function createSigningDomains(
  db: Knex,
  secrets: Buffer,
  managedDkim: ManagedDkimConfig,
  ttlMs = DOMAIN_CACHE_MS,
): SigningDomains {
  // A missing domain is not remembered: the next message asks again.
  const domains = ttlCache<SigningDomain | null>(ttlMs, (v) => v !== null);
  // The platform key: one lookup (and, the first time ever, one key generation) for all the managed domains.
  const platform = ttlCache<SigningKey>(ttlMs);

  async function load(domainId: string): Promise<SigningDomain | null> {
    const row: (SendingDomain & { managed: boolean }) | undefined = await db('domains')
      .where({ id: domainId })
      .first('id', 'name', 'custom_return_path', 'managed');
    if (!row) return null;
    const domain: SendingDomain = { id: row.id, name: row.name, custom_return_path: row.custom_return_path };
    if (!row.managed) return { domain, keys: await signingKeys(db, secrets, domain) };
    return { domain, keys: [await platform('platform', () => platformSigningKey(db, secrets, managedDkim))] };
  }

  return { get: (domainId) => domains(domainId, () => load(domainId)) };
}
