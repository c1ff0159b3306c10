// The lease of a job on the recipients it delivers (email_recipients.leased_until). Taking it is one conditional
// update, so two jobs never hold one recipient. While the job works, a heartbeat extends it every LEASE_MS / 3,
// so a slow destination (waiting for a throttle slot, a peer that answers at the last second of every timeout)
// never lets it run out under a living job; it runs out only when the process dies. leased_until doubles as the
// lease's identity: record.ts moves only rows that still hold the current token, and renewals and records take
// turns (use()), so a record never races a renewal.
import { randomInt } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from '../../shared/logger.ts';
import type { LeasedRecipient } from './types.ts';
import { eventRow } from '../../shared/events.ts';
import { runPrepared } from '../../shared/db/prepared.ts';

export const LEASE_MS = 10 * 60_000;

const COLUMNS = ['id', 'email_id', 'team_id', 'address', 'domain', 'kind', 'status', 'attempts', 'first_deferred_at', 'delay_notified'];

/** An instant as a token: random microseconds keep two jobs that start in the same millisecond apart. */
function token(at: Date): string {
  return at.toISOString().replace('Z', `${String(randomInt(1000)).padStart(3, '0')}Z`);
}

export interface Lease {
  recipients: LeasedRecipient[];
  /** Runs `work` with the current token, never while a renewal is under way. */
  use<T>(work: (token: string) => Promise<T>): Promise<T>;
  release(): void;
}

/** The email.sent event to record when the lease moves the email queued → sending (its first job). */
export interface FirstSend {
  teamId: string;
  data: Record<string, unknown>;
}

/**
 * Leases the due recipients of an email at `now`; null when none is due and free. With `firstSend`, the same
 * statement moves the email queued → sending and records email.sent, when it leased something and the email is
 * still queued (conditional, so once): one round trip instead of a lease and a transaction of three.
 */
export async function takeLease(db: Knex, log: Logger, emailId: string, now: Date, renewEveryMs = LEASE_MS / 3, firstSend?: FirstSend): Promise<Lease | null> {
  let current = token(new Date(now.getTime() + LEASE_MS));
  // Prepared statements: they run once per job (shared/db/prepared.ts).
  const lease = `update email_recipients set leased_until = $1
    where email_id = $2 and status in ('queued', 'deferred') and (next_attempt_at is null or next_attempt_at <= $3)
      and (leased_until is null or leased_until < $3)
    returning ${COLUMNS.join(', ')}`;
  let recipients: LeasedRecipient[];
  if (firstSend) {
    const sent = eventRow(firstSend.teamId, 'email.sent', firstSend.data);
    recipients = await runPrepared(db, 'mta_lease_first', `with leased as (${lease}),
      moved as (update emails set status = 'sending', last_event = case when last_event = 'queued' then 'sent' else last_event end, updated_at = $3
        where id = $2 and status = 'queued' and exists (select 1 from leased) returning id),
      sent as (insert into events (id, team_id, type, data) select $4, $5, $6, $7::jsonb from moved)
      select ${COLUMNS.join(', ')} from leased`, [current, emailId, now, sent.id, sent.team_id, sent.type, sent.data]);
  } else {
    recipients = await runPrepared(db, 'mta_lease', lease, [current, emailId, now]);
  }
  if (recipients.length === 0) return null;

  const started = performance.now();
  let turn: Promise<unknown> = Promise.resolve();
  const use = <T>(work: (t: string) => Promise<T>): Promise<T> => {
    const result = turn.then(() => work(current));
    turn = result.catch(() => undefined);
    return result;
  };
  const heartbeat = setInterval(() => {
    void use(async (old) => {
      // `now` may be a test's clock: the lease moves on from it by the time really spent.
      const next = token(new Date(now.getTime() + (performance.now() - started) + LEASE_MS));
      await db('email_recipients').where({ email_id: emailId, leased_until: old }).update({ leased_until: next });
      current = next;
    }).catch((err) => log.warn({ err, emailId }, 'delivery.lease_renewal_failed'));
  }, renewEveryMs);
  heartbeat.unref();
  return { recipients, use, release: () => clearInterval(heartbeat) };
}
