// What signing a message for a sending domain needs (the domain's name and return-path label for the envelope,
// its active DKIM keys opened), kept for a few seconds per domain: a busy domain then costs no query and no key
// unsealing per message. A key activated, retired or rotated, or a domain deleted, takes effect within the TTL
// (DOMAIN_CACHE_MS); DNS keeps a retired key's record far longer than that, so a signature made in that window
// still verifies. A managed domain has no keys of its own: it signs with the platform key (`d=`
// MANAGED_DOMAIN_HOST, shared/domains/platform-dkim.ts), opened once per TTL for all the managed domains. The
// domain's open and click tracking settings come with it (track.ts), and its TLS policy (transmit.ts): a change
// reaches the next messages within the TTL.
import type { Knex } from 'knex';
import type { ManagedDkimConfig } from '../../shared/domains/platform-dkim.ts';
import { platformSigningKey, signingKeys, type SigningKey } from './sign.ts';
import type { SendingDomain } from './envelope.ts';
import { ttlCache } from './ttl-cache.ts';

export const DOMAIN_CACHE_MS = 10_000;

/** Open and click tracking of a domain that has either on: its tracking host is `<tracking_subdomain>.<name>`. */
export interface TrackingSettings {
  open: boolean;
  click: boolean;
  host: string;
}

export interface SigningDomain {
  domain: SendingDomain;
  keys: SigningKey[];
  /** null: tracking off, the messages leave as they are. */
  tracking: TrackingSettings | null;
  /** `tls: enforced`: never sent in the clear. */
  requireTls: boolean;
}

interface DomainRow extends SendingDomain {
  managed: boolean;
  open_tracking: boolean;
  click_tracking: boolean;
  tracking_subdomain: string | null;
  tls: 'opportunistic' | 'enforced';
}

function trackingOf(row: DomainRow): TrackingSettings | null {
  if (!(row.open_tracking || row.click_tracking) || !row.tracking_subdomain) return null;
  return { open: row.open_tracking, click: row.click_tracking, host: `${row.tracking_subdomain}.${row.name}` };
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
    const row: DomainRow | undefined = await db('domains')
      .where({ id: domainId })
      .first(
        'id',
        'name',
        'custom_return_path',
        'managed',
        'open_tracking',
        'click_tracking',
        'tracking_subdomain',
        'tls',
      );
    if (!row) return null;
    const domain: SendingDomain = { id: row.id, name: row.name, custom_return_path: row.custom_return_path };
    const settings = { tracking: trackingOf(row), requireTls: row.tls === 'enforced' };
    if (!row.managed) return { domain, keys: await signingKeys(db, secrets, domain), ...settings };
    return {
      domain,
      keys: [await platform('platform', () => platformSigningKey(db, secrets, managedDkim))],
      ...settings,
    };
  }

  return { get: (domainId) => domains(domainId, () => load(domainId)) };
}
