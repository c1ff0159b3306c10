// The receiving limits of a team (interface spec, Limits, "Received mail"): teams.receive_daily_cap and
// teams.receive_storage_bytes, set by the operator CLI (`team set-receive-limits`); null is no limit.
//
// What counts is what a team keeps: a received email not dropped, or dropped as parse_failed (its raw source
// stays downloadable). Other dropped records keep no content, their raw goes, and they count for nothing.
// - daily_cap: kept messages received (created_at, the MX's 250) on the same UTC day as this one; the day
//   starts at 00:00 UTC as the send limit's does, and a message processed late still counts for its own day.
// - storage_quota: the sum of received_messages.size of the team's kept messages that remain; deleting a
//   received email (DELETE /emails/receiving/{id}) removes its rows and so returns its bytes.
// Messages not yet processed count for nothing until their own job decides. The decision and the insert of
// the received email run under a per-team transaction lock, so concurrent jobs (any number of inbound
// copies) never keep more than the limits allow.
import type { Knex } from 'knex';
import { prepared } from '../../shared/db/prepared.ts';

export type LimitReason = 'daily_cap' | 'storage_quota';

export interface LimitedMessage {
  id: string;
  team_id: string;
  size: number;
  received_at: Date;
}

const DAY_MS = 86_400_000;

const kept = (q: Knex.QueryBuilder) =>
  q.where((w) => w.whereNull('e.dropped_reason').orWhere('e.dropped_reason', 'parse_failed'));

/**
 * Why this message is over a limit of its team, or null; storage first, since it does not pass by itself.
 * `lock` (inside the transaction that records the message): one team's decisions are taken one at a time, the
 * lock held until that transaction ends. A team without limits takes no lock.
 */
export async function limitVerdict(
  db: Knex,
  message: LimitedMessage,
  options: { lock?: boolean } = {},
): Promise<LimitReason | null> {
  // Read twice a message (before the work and under the lock): a prepared statement, planned once per connection.
  const [team] = await prepared<{ receive_daily_cap: number | null; receive_storage_bytes: string | number | null }>(
    db,
    'pw_receive_team_limits',
    'select receive_daily_cap, receive_storage_bytes from teams where id = ?',
    [message.team_id],
  );
  if (!team || (team.receive_storage_bytes === null && team.receive_daily_cap === null)) return null;
  if (options.lock)
    await db.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`receive-limits:${message.team_id}`]);
  if (team.receive_storage_bytes !== null) {
    const [{ used }] = await kept(
      db({ e: 'received_emails' })
        .join({ m: 'received_messages' }, 'm.id', 'e.id')
        .where('e.team_id', message.team_id)
        .whereNot('e.id', message.id),
    ).sum({ used: 'm.size' });
    if (Number(used ?? 0) + message.size > Number(team.receive_storage_bytes)) return 'storage_quota';
  }
  if (team.receive_daily_cap !== null) {
    const dayStart = new Date(Math.floor(message.received_at.getTime() / DAY_MS) * DAY_MS);
    const [{ count }] = await kept(
      db({ e: 'received_emails' })
        .where('e.team_id', message.team_id)
        .whereNot('e.id', message.id)
        .where('e.created_at', '>=', dayStart)
        .where('e.created_at', '<', new Date(dayStart.getTime() + DAY_MS)),
    ).count({ count: '*' });
    if (Number(count) >= team.receive_daily_cap) return 'daily_cap';
  }
  return null;
}
