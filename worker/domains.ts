// Domain verification in the worker: a sweep every few seconds leases the domains that are due (new ones,
// ones whose customer pressed verify, pending ones on their backoff, verified ones daily) and checks each.
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger.ts';
import type { PlatformHosts } from '../shared/domains/records.ts';
import { checkDomain, leaseDueDomains, leaseEnd, type VerifyResolver } from '../shared/domains/verify.ts';
import { checkClaim, leaseDueClaims } from '../shared/domains/claim-verify.ts';
import type { ClaimContext } from '../shared/domains/claims.ts';

export const SWEEP_EVERY_MS = 2000;
const BATCH = 50;
const PARALLEL = 8;

export async function sweepDomains(
  db: Knex,
  resolver: VerifyResolver,
  hosts: PlatformHosts,
  log: Logger,
  now = new Date(),
): Promise<number> {
  const ids = await leaseDueDomains(db, now, BATCH);
  let next = 0;
  const lane = async () => {
    while (next < ids.length) {
      const id = ids[next++];
      try {
        const d = await checkDomain(db, resolver, hosts, id, now, leaseEnd(now));
        log.debug({ domainId: id, status: d?.status }, 'domain.checked');
      } catch (err) {
        // The lease runs out and the domain is picked up again by a later sweep.
        log.error({ err, domainId: id }, 'domain.check_failed');
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, ids.length) }, lane));
  return ids.length;
}

/** Domain claims whose claimer asked for verification, re-checked on their backoff until they end. */
export async function sweepClaims(
  db: Knex,
  ctx: Pick<ClaimContext, 'resolver' | 'hosts' | 'secrets'>,
  log: Logger,
  now = new Date(),
): Promise<number> {
  const ids = await leaseDueClaims(db, now, BATCH);
  for (const id of ids) {
    try {
      const claim = await checkClaim(db, ctx.resolver, ctx, id, now);
      log.debug({ claimId: id, status: claim?.status }, 'domain_claim.checked');
    } catch (err) {
      log.error({ err, claimId: id }, 'domain_claim.check_failed');
    }
  }
  return ids.length;
}
