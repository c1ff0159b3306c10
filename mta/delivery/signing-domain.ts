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
export function createSigningDomains(db: Knex, secrets: Buffer, managedDkim: ManagedDkimConfig, ttlMs = DOMAIN_CACHE_MS): SigningDomains {
  const cache = new Map<string, { at: number; value: Promise<SigningDomain | null> }>();
  let platform: { at: number; value: Promise<SigningKey> } | undefined;

  // One lookup (and, the first time ever, one key generation) for however many managed domains ask at once.
  function platformKey(): Promise<SigningKey> {
    const now = Date.now();
    if (platform && now - platform.at < ttlMs) return platform.value;
    const value = platformSigningKey(db, secrets, managedDkim);
    if (ttlMs <= 0) return value;
    const entry = { at: now, value };
    platform = entry;
    value.catch(() => {
      if (platform === entry) platform = undefined;
    });
    return value;
  }

  async function load(domainId: string): Promise<SigningDomain | null> {
    const row: (SendingDomain & { managed: boolean }) | undefined = await db('domains').where({ id: domainId }).first('id', 'name', 'custom_return_path', 'managed');
    if (!row) return null;
    const domain: SendingDomain = { id: row.id, name: row.name, custom_return_path: row.custom_return_path };
    if (!row.managed) return { domain, keys: await signingKeys(db, secrets, domain) };
    return { domain, keys: [await platformKey()] };
  }

  return {
    get(domainId) {
      const now = Date.now();
      const hit = cache.get(domainId);
      if (hit && now - hit.at < ttlMs) return hit.value;
      const value = load(domainId);
      if (ttlMs <= 0) return value;
      cache.set(domainId, { at: now, value });
      // Neither a failed lookup nor a missing domain is remembered: the next message asks again.
      value.then((v) => v === null && cache.delete(domainId), () => cache.delete(domainId));
      if (cache.size > 10_000) cache.delete(cache.keys().next().value!);
      return value;
    },
  };
}
