// Ownership-safety checks a claim passes before a domain leaves its team, even with the DNS proof in hand:
// control of DNS can change hands briefly (a hijacked DNS account, a dangling delegation), and a team that is
// using its domain right now deserves a day's notice in its webhooks before it loses it. A block is not final:
// the claim is checked again, and moves once the block has cleared (or expires after its 7 days).
import type { Knex } from 'knex';
import type { BlockedReason } from './claims.ts';
import type { DomainRow } from './store.ts';

/** A domain that joined its team or was verified less than this ago is left where it is. */
export const CLAIM_GRACE_MS = 24 * 3600_000;
/** The holding team changed, verified or sent from the domain less than this ago. */
export const RECENT_ACTIVITY_MS = 24 * 3600_000;

export interface Block {
  reason: BlockedReason;
  /** When the block clears by itself, when that is known. */
  until: Date | null;
}

/**
 * grace_period: the holder's proof of control is fresh (added or verified within CLAIM_GRACE_MS; a domain that
 * just arrived by a claim counts as added), so a competing proof the same day is not trusted to overturn it.
 */
function gracePeriod(holder: DomainRow, now: Date): Block | null {
  const since = Math.max(holder.created_at.getTime(), holder.verified_at?.getTime() ?? 0);
  const until = since + CLAIM_GRACE_MS;
  return now.getTime() < until ? { reason: 'grace_period', until: new Date(until) } : null;
}

/**
 * recent_owner_activity: within RECENT_ACTIVITY_MS the holding team made a successful write request on the
 * domain (PATCH, verify, DKIM rotation, any POST/PUT/DELETE under /domains/{id}) or used a sending key bound
 * to it. Reads do not count: looking at a domain is not using it.
 */
async function recentOwnerActivity(db: Knex, holder: DomainRow, now: Date): Promise<Block | null> {
  const cutoff = new Date(now.getTime() - RECENT_ACTIVITY_MS);
  const paths = [`/domains/${holder.id}`, `/api/v1/domains/${holder.id}`];
  const [request, key] = await Promise.all([
    db('request_logs')
      .where({ team_id: holder.team_id })
      .where('created_at', '>', cutoff)
      .whereIn('method', ['POST', 'PUT', 'PATCH', 'DELETE'])
      .where('response_status', '<', 400)
      .where((q) => {
        for (const p of paths) q.orWhere('endpoint', p).orWhere('endpoint', 'like', `${p}/%`);
      })
      .max({ at: 'created_at' })
      .first(),
    db('api_keys')
      .where({ domain_id: holder.id, status: 'active' })
      .where('last_used_at', '>', cutoff)
      .max({ at: 'last_used_at' })
      .first(),
  ]);
  const times = [request?.at, key?.at].filter((t): t is Date => t instanceof Date).map((t) => t.getTime());
  if (times.length === 0) return null;
  return { reason: 'recent_owner_activity', until: new Date(Math.max(...times) + RECENT_ACTIVITY_MS) };
}

/**
 * pending_scheduled_emails: the holding team has emails scheduled to go out from the domain; moving it would make
 * them fail (domain_not_found at release). The block clears once the last of them is due (or sooner, when they are
 * canceled: the claim is checked again).
 */
async function pendingScheduledEmails(db: Knex, holder: DomainRow): Promise<Block | null> {
  const {
    rows: [row],
  } = await db.raw<{ rows: { last: Date | null }[] }>(
    "select max(scheduled_at) as last from emails where team_id = ? and domain_id = ? and status = 'scheduled'",
    [holder.team_id, holder.id],
  );
  return row?.last ? { reason: 'pending_scheduled_emails', until: row.last } : null;
}

/** The first check that holds the move away from any of `holders`, or null when the claim may complete. */
export async function safetyBlock(db: Knex, holders: DomainRow[], now: Date): Promise<Block | null> {
  for (const holder of holders) {
    const block =
      gracePeriod(holder, now) ??
      (await recentOwnerActivity(db, holder, now)) ??
      (await pendingScheduledEmails(db, holder));
    if (block) return block;
  }
  return null;
}
