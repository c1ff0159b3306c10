// Checking a claim: look the proof up through the configured resolver, then, in one transaction, either keep
// waiting (pending), hold the move (blocked), give up (failed, expired) or move the domain (completed).
// POST /domains/{domain_id}/claim/verify checks at once and starts the worker's re-checks on a backoff until
// the claim completes or expires, so a client may also just poll GET.
import type { Knex } from 'knex';
import { fqdn } from './names.ts';
import { PENDING_DELAYS_MS, type RecordStatus } from './status.ts';
import type { DomainRow } from './store.ts';
import type { Lookup } from './verdicts.ts';
import {
  CLAIM_RECORD_NAME,
  claimValue,
  expireIfDue,
  findClaim,
  isOpen,
  OPEN_STATUSES,
  type ClaimContext,
  type ClaimRow,
} from './claims.ts';
import { safetyBlock } from './claim-safety.ts';
import { moveDomain } from './claim-move.ts';

const LEASE_MS = 2 * 60_000;

/**
 * The proof: one TXT record at the claim name whose whole value is ours. A value that only contains or begins
 * with it is someone else's record; other TXT records beside it are allowed. A failed lookup proves nothing.
 */
export function claimRecordStatus(lookup: Lookup<string>, value: string): RecordStatus {
  if (lookup.status === 'temporary') return 'temporary_failure';
  if (lookup.status !== 'ok') return 'pending';
  return lookup.records.some((r) => r === value) ? 'verified' : 'pending';
}

/** The next look: on the pending backoff, or when a block clears, never past the claim's expiry. */
function nextCheck(claim: ClaimRow, count: number, now: Date, until: Date | null): Date {
  const backoff = now.getTime() + PENDING_DELAYS_MS[Math.min(count - 1, PENDING_DELAYS_MS.length - 1)];
  const at = until ? Math.max(until.getTime(), now.getTime() + PENDING_DELAYS_MS[0]) : backoff;
  return new Date(Math.min(at, claim.expires_at.getTime()));
}

export async function checkClaim(
  db: Knex,
  resolver: ClaimContext['resolver'],
  ctx: Pick<ClaimContext, 'hosts' | 'secrets'>,
  claimId: string,
  now = new Date(),
): Promise<ClaimRow | null> {
  const claim = await db<ClaimRow>('domain_claims').where({ id: claimId }).first();
  if (!claim || !isOpen(claim)) return claim ?? null;
  if (now >= claim.expires_at) return expireIfDue(db, claim, now);
  const record = claimRecordStatus(await resolver.txt(fqdn(CLAIM_RECORD_NAME, claim.name)), claimValue(claim.token));

  return db.transaction(async (trx) => {
    // One move per name at a time: a second claim for the name sees the first one's result.
    await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`domain-claim-name:${claim.name}`]);
    const locked = await trx<ClaimRow>('domain_claims').where({ id: claimId }).forUpdate().first();
    if (!locked || !isOpen(locked)) return locked ?? null;
    if (now >= locked.expires_at) return expireIfDue(trx, locked, now);
    const count = locked.check_count + 1;
    const save = async (changes: Partial<ClaimRow>) => {
      const [row] = await trx<ClaimRow>('domain_claims')
        .where({ id: claimId })
        .update({ record_status: record, last_checked_at: now, check_count: count, updated_at: now, ...changes })
        .returning('*');
      return row;
    };
    const fail = (failure_reason: string) =>
      save({ status: 'failed', failure_reason, blocked_reason: null, next_check_at: null });

    if (record !== 'verified')
      return save({ status: 'pending', blocked_reason: null, next_check_at: nextCheck(locked, count, now, null) });
    if (await trx('domains').where({ team_id: locked.team_id, name: locked.name }).first('id')) {
      return fail(`This team already has ${locked.name} among its domains; nothing was moved.`);
    }
    const holders = await trx<DomainRow>('domains')
      .where({ name: locked.name, managed: false })
      .whereNot({ team_id: locked.team_id })
      .forUpdate();
    if (holders.length === 0) {
      return fail(`No other team has ${locked.name} any more, so there is nothing to move: add it with POST /domains.`);
    }
    const block = await safetyBlock(trx, holders, now);
    if (block)
      return save({
        status: 'blocked',
        blocked_reason: block.reason,
        next_check_at: nextCheck(locked, count, now, block.until),
      });
    await moveDomain(trx, locked, holders, ctx, now);
    return save({ status: 'completed', blocked_reason: null, next_check_at: null, completed_at: now });
  });
}

/** POST /domains/{domain_id}/claim/verify: check now; a claim that is over answers as it stands. */
export async function verifyClaim(
  db: Knex,
  teamId: string,
  domainId: string,
  ctx: ClaimContext,
  now = new Date(),
): Promise<ClaimRow> {
  const claim = await findClaim(db, teamId, domainId, now);
  return (await checkClaim(db, ctx.resolver, ctx, claim.id, now)) ?? claim;
}

/** Leases the claims due for a re-check (so two workers never check one claim at once). */
export async function leaseDueClaims(db: Knex, now: Date, limit: number): Promise<string[]> {
  const rows = await db('domain_claims')
    .whereIn(
      'id',
      db('domain_claims')
        .select('id')
        .where('next_check_at', '<=', now)
        .whereIn('status', OPEN_STATUSES)
        .orderBy('next_check_at')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .update({ next_check_at: new Date(now.getTime() + LEASE_MS) })
    .returning('id');
  return rows.map((r: { id: string }) => r.id);
}
