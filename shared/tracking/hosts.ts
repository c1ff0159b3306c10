// Which domain a tracking host belongs to: `<tracking_subdomain>.<name>` → the domains of that name whose tracking
// subdomain it is (more than one only while teams contend for a name, before a claim settles it; the token's tag says
// whose it is, tokens.ts). Answers, empty ones included, are kept TTL_MS, at most MAX_HOSTS of them: a hit costs no
// query, and a flood of made-up Host headers costs one query each and a bounded amount of memory. A host that keeps
// being hit has its answer renewed before it expires, so its hits never wait for a query.
import type { Knex } from 'knex';

export interface TrackingDomain {
  id: string;
  team_id: string;
}

export const TTL_MS = 30_000;
const MAX_HOSTS = 10_000;
const HOSTNAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/** The Host header as a name: lower case, without a port or a trailing dot; '' when it is not a host name. */
export function hostName(header: string | undefined): string {
  const name = (header ?? '')
    .trim()
    .toLowerCase()
    .replace(/:\d{1,5}$/, '')
    .replace(/\.$/, '');
  return HOSTNAME.test(name) ? name : '';
}

export interface TrackingHosts {
  lookup(host: string): Promise<TrackingDomain[]>;
}

interface Kept {
  until: number;
  value: Promise<TrackingDomain[]>;
  /** A renewal is under way (or failed: the answer then expires as it would have). */
  renewing?: boolean;
}

export function trackingHosts(db: Knex, ttlMs = TTL_MS): TrackingHosts {
  const kept = new Map<string, Kept>();
  const load = async (host: string): Promise<TrackingDomain[]> => {
    const dot = host.indexOf('.');
    if (dot < 0) return [];
    return db('domains')
      .where({ tracking_subdomain: host.slice(0, dot), name: host.slice(dot + 1) })
      .select('id', 'team_id');
  };
  const keep = (host: string, entry: Kept) => {
    kept.delete(host);
    if (kept.size >= MAX_HOSTS) kept.delete(kept.keys().next().value!);
    kept.set(host, entry);
  };
  const ask = (host: string, now: number): Kept => {
    const entry: Kept = { until: now + ttlMs, value: load(host) };
    // A failed lookup is not kept: the next hit asks again.
    entry.value.catch(() => kept.get(host) === entry && kept.delete(host));
    return entry;
  };
  return {
    lookup(host) {
      if (!host) return Promise.resolve([]);
      const now = Date.now();
      const hit = kept.get(host);
      if (hit && hit.until > now) {
        // In the last fifth of its life an answer is asked again in the background and replaced once the new one is
        // in: a steady stream of hits never waits for the database (every hit of a host would wait for the one
        // query behind whatever holds the pool), and no answer is used past its TTL_MS.
        if (!hit.renewing && hit.until - now < ttlMs / 5) {
          hit.renewing = true;
          const next = ask(host, now);
          next.value.then(
            () => kept.get(host) === hit && keep(host, next),
            () => undefined,
          );
        }
        return hit.value;
      }
      const entry = ask(host, now);
      keep(host, entry);
      return entry.value;
    },
  };
}
