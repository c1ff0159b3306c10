// Domain claims: a team takes over a domain another team has verified by publishing a TXT record that proves
// it controls the domain's DNS now. Starting, reading and canceling a claim live here; the check and the move
// in claim-verify.ts, claim-safety.ts and claim-move.ts.
//
// The proof is a TXT record at `_postwerk-claim.<name>` whose whole value is `postwerk-domain-verification=<token>`
// (an underscore name of its own, RFC 8552, so it never crowds the apex TXT set that carries SPF and other
// services' proofs; 128 random bits; valid for the claim's 7 days).
//
// `domain_id` is the id the domain takes in the claiming team, allocated when the claim starts: GET and verify
// find the claim by it (as Resend's SDK calls `claims.get(domainId)`), and once the claim completes the same
// id names the team's new domain. Statuses: pending (proof not found yet) → blocked (proof found, an
// ownership-safety check holds the move; re-checked) → completed (moved in the transaction that saw the proof,
// so `verified` is never stored), or expired, superseded, canceled, failed.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { isoRequired } from '../time.ts';
import { ServiceError, notFound } from '../errors.ts';
import type { Region } from '../teams/teams.ts';
import { normalizeDomainName, normalizeLabel } from './names.ts';
import type { RecordStatus } from './status.ts';
import type { DomainContext } from './domains.ts';
import { findReturnPathConflict, pickReturnPath } from './return-path.ts';

export type ClaimStatus =
  'pending' | 'verified' | 'completed' | 'blocked' | 'expired' | 'superseded' | 'canceled' | 'failed';
export type BlockedReason = 'grace_period' | 'recent_owner_activity' | 'pending_scheduled_emails';

export interface ClaimRow {
  id: string;
  team_id: string;
  domain_id: string;
  name: string;
  region: Region;
  custom_return_path: string;
  open_tracking: boolean;
  click_tracking: boolean;
  tracking_subdomain: string | null;
  token: string;
  status: ClaimStatus;
  record_status: RecordStatus;
  blocked_reason: BlockedReason | null;
  failure_reason: string | null;
  next_check_at: Date | null;
  last_checked_at: Date | null;
  check_count: number;
  created_at: Date;
  updated_at: Date;
  expires_at: Date;
  completed_at: Date | null;
}

export interface ClaimContext extends DomainContext {
  /** MANAGED_DOMAIN_HOST: names under it belong to the platform and are never claimed. */
  managedHost: string;
}

export interface CreateClaimInput {
  name: string;
  region?: Region;
  custom_return_path?: string;
  open_tracking?: boolean;
  click_tracking?: boolean;
  tracking_subdomain?: string;
}

export const CLAIM_TTL_MS = 7 * 24 * 3600_000;
export const CLAIM_RECORD_NAME = '_postwerk-claim';
export const OPEN_STATUSES: ClaimStatus[] = ['pending', 'verified', 'blocked'];

export const claimValue = (token: string) => `postwerk-domain-verification=${token}`;
export const isOpen = (c: Pick<ClaimRow, 'status'>) => OPEN_STATUSES.includes(c.status);

function refuse(message: string, path = 'name'): ServiceError {
  return new ServiceError('validation_error', message, { errors: [{ path, message }] });
}

/** The claimer's settings for the domain it will receive, checked as POST /domains checks them. */
async function claimSettings(input: CreateClaimInput, name: string, ctx: DomainContext) {
  const open_tracking = input.open_tracking ?? false;
  const click_tracking = input.click_tracking ?? false;
  let tracking_subdomain =
    input.tracking_subdomain !== undefined ? normalizeLabel(input.tracking_subdomain, 'tracking_subdomain') : null;
  if ((open_tracking || click_tracking) && !tracking_subdomain) tracking_subdomain = 'links';
  let custom_return_path: string;
  if (input.custom_return_path === undefined) {
    custom_return_path = await pickReturnPath(ctx.resolver, name, ctx.hosts, tracking_subdomain);
  } else {
    custom_return_path = normalizeLabel(input.custom_return_path, 'custom_return_path');
    const found = await findReturnPathConflict(ctx.resolver, name, custom_return_path, ctx.hosts);
    if (found) {
      throw new ServiceError(
        'invalid_parameter',
        `The label ${custom_return_path}.${name} already carries another service's ${found.type} record; choose another custom_return_path.`,
        {
          details: { reason: 'return_path_in_use', label: custom_return_path, found },
        },
      );
    }
  }
  if (tracking_subdomain && tracking_subdomain === custom_return_path)
    throw refuse('`tracking_subdomain` and `custom_return_path` must differ.', 'tracking_subdomain');
  return { custom_return_path, open_tracking, click_tracking, tracking_subdomain };
}

export async function createClaim(
  db: Knex,
  teamId: string,
  input: CreateClaimInput,
  ctx: ClaimContext,
  now = new Date(),
): Promise<ClaimRow> {
  const name = normalizeDomainName(input.name, ctx.reservedAllowed);
  if (name === ctx.managedHost || name.endsWith(`.${ctx.managedHost}`)) {
    throw refuse(`${name} is under the platform's managed host and cannot be claimed.`);
  }
  if (await db('domains').where({ team_id: teamId, name }).first('id')) {
    throw refuse(`The domain ${name} is already one of this team's domains; there is nothing to claim.`);
  }
  const held = await db('domains')
    .where({ name, status: 'verified', managed: false })
    .whereNot({ team_id: teamId })
    .first('id');
  if (!held) {
    throw refuse(`No other team has ${name} verified, so there is nothing to claim: add it with POST /domains.`);
  }
  const settings = await claimSettings(input, name, ctx);
  return db.transaction(async (trx) => {
    // Two claims started at once by one team for one name: the later waits here and supersedes the other.
    await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`domain-claim:${teamId}:${name}`]);
    await trx('domain_claims')
      .where({ team_id: teamId, name })
      .whereIn('status', OPEN_STATUSES)
      .update({ status: 'superseded', next_check_at: null, updated_at: now });
    const [row] = await trx<ClaimRow>('domain_claims')
      .insert({
        id: newId(),
        team_id: teamId,
        domain_id: newId(),
        name,
        region: input.region ?? 'us-east-1',
        ...settings,
        token: randomBytes(16).toString('hex'),
        status: 'pending',
        record_status: 'not_started',
        created_at: now,
        updated_at: now,
        expires_at: new Date(now.getTime() + CLAIM_TTL_MS),
      })
      .returning('*');
    return row;
  });
}

/** An open claim past its expiry is expired (a conditional update, so a concurrent completion wins). */
export async function expireIfDue(db: Knex, claim: ClaimRow, now: Date): Promise<ClaimRow> {
  if (!isOpen(claim) || now < claim.expires_at) return claim;
  const [row] = await db<ClaimRow>('domain_claims')
    .where({ id: claim.id })
    .whereIn('status', OPEN_STATUSES)
    .update({ status: 'expired', record_status: 'failed', blocked_reason: null, next_check_at: null, updated_at: now })
    .returning('*');
  return row ?? (await db<ClaimRow>('domain_claims').where({ id: claim.id }).first())!;
}

/** The claim of the caller's team whose `domain_id` this is. */
export async function findClaim(db: Knex, teamId: string, domainId: string, now = new Date()): Promise<ClaimRow> {
  const row = await db<ClaimRow>('domain_claims').where({ team_id: teamId, domain_id: domainId }).first();
  if (!row) throw notFound('Domain claim');
  return expireIfDue(db, row, now);
}

/** Cancels the open claim whose `domain_id` this is (DELETE /domains/{domain_id}); false when there is none. */
export async function cancelClaim(db: Knex, teamId: string, domainId: string, now = new Date()): Promise<boolean> {
  const rows = await db('domain_claims')
    .where({ team_id: teamId, domain_id: domainId })
    .whereIn('status', OPEN_STATUSES)
    .update({ status: 'canceled', blocked_reason: null, next_check_at: null, updated_at: now })
    .returning('id');
  return rows.length > 0;
}

/** The DomainClaim shape (interface spec, DomainClaim). */
export function presentClaim(c: ClaimRow) {
  return {
    object: 'domain_claim' as const,
    id: c.id,
    name: c.name,
    status: c.status,
    domain_id: c.domain_id,
    region: c.region,
    record: {
      record: 'Claim' as const,
      name: CLAIM_RECORD_NAME,
      type: 'TXT' as const,
      ttl: 'Auto',
      status: c.record_status,
      value: claimValue(c.token),
    },
    blocked_reason: c.blocked_reason,
    failure_reason: c.failure_reason,
    created_at: isoRequired(c.created_at),
    expires_at: isoRequired(c.expires_at),
  };
}
