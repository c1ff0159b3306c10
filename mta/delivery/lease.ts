// The lease of a job on the recipients it delivers (email_recipients.leased_until). Taking it is one conditional
// update, in the job's one statement that also reads the email (takeLease), so two jobs never hold one recipient. The
// lease is short (LEASE_MS, 30 s), so a killed mta's recipients are free again within seconds and the sweep hands them
// to a living one (Postfix likewise delivers its active queue again as soon as it restarts). While the job works, a
// heartbeat extends it every RENEW_EVERY_MS, so a slow destination (a throttle slot, a peer that answers at the last
// second of every timeout) never lets it run out under a living job. A holder must never deliver what it can no longer
// prove it holds: `proven()` says whether the last successful renewal (or the taking) still covers the next while (a
// renewal that finds no row with its token ends the proof for good), and the job opens no SMTP transaction when it
// does not (a database that stops answering renewals would otherwise let the lease pass to another job while this one
// still sends). leased_until doubles as the lease's identity: record.ts moves only rows that still hold the current
// token, and renewals and records take turns (use()), so a record never races a renewal.
import { randomInt } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from '../../shared/logger.ts';
import type { LeasedRecipient } from './types.ts';
import { prepared } from '../../shared/db/prepared.ts';
import { reviveDates } from '../../shared/emails/sql.ts';
import type { LoadedEmail } from './compose.ts';
import { EMAIL_COLUMNS as EMAIL_NAMES } from '../../shared/emails/columns.ts';

export const LEASE_MS = 30_000;
/** Six renewals a lease: several may fail or come late before it could run out. */
export const RENEW_EVERY_MS = 5_000;
/** What `proven()` asks of the lease by default: at least this much of it left (an SMTP transaction's start). */
export const PROOF_MARGIN_MS = LEASE_MS / 2;

const COLUMNS = [
  'id',
  'email_id',
  'team_id',
  'address',
  'domain',
  'kind',
  'status',
  'attempts',
  'first_deferred_at',
  'delay_notified',
];

/** An instant as a token: random microseconds keep two jobs that start in the same millisecond apart. */
function token(at: Date): string {
  return at.toISOString().replace('Z', `${String(randomInt(1000)).padStart(3, '0')}Z`);
}

export interface Lease {
  recipients: LeasedRecipient[];
  /** Runs `work` with the current token, never while a renewal is under way. */
  use<T>(work: (token: string) => Promise<T>): Promise<T>;
  /** True while the lease is known to last at least `marginMs` more (PROOF_MARGIN_MS by default). */
  proven(marginMs?: number): boolean;
  release(): void;
}

/** What a job works on: the email (with its stored message, or its attachment rows when it has none) and its lease. */
export interface LeasedWork {
  email: LoadedEmail;
  lease: Lease;
}

// The email columns takeLease reads (those a send writes). Named, not e.*: a prepared statement whose result columns
// change (a migration adding one) fails until the connection closes, while one that names its columns is simply
// planned again. Also `broadcast_id`, which only a broadcast's fan-out writes (shared/broadcasts/fanout-rows.ts).
const LEASED_NAMES = [...EMAIL_NAMES, 'broadcast_id'];
const EMAIL_COLUMNS = LEASED_NAMES.map((c) => `e."${c}"`).join(', ');
const EMAIL_FIELDS = LEASED_NAMES.map((c) => `"${c}"`).join(', ');

/** Rows through json: timestamps come back as strings. */
const EMAIL_DATES = ['scheduled_at', 'created_at', 'updated_at'];

/**
 * The lease's statement: $1 the token, $2 the email, $3 now. Reads the email and leases its recipients that are due
 * and free.
 */
export const TAKE_LEASE_SQL = `with e as (
    select ${EMAIL_COLUMNS}, r.bytes as raw, case when e.raw_blob_key is null and r.email_id is null then (
      select coalesce(json_agg(json_build_object('filename', a.filename, 'content_type', a.content_type, 'content_id', a.content_id,
        'content_disposition', a.content_disposition, 'blob_key', a.blob_key) order by a.position), '[]'::json)
      from email_attachments a where a.email_id = e.id) end as attachments
    from emails e left join email_raw r on r.email_id = e.id where e.id = $2 and e.status in ('queued', 'sending')
      and not exists (select 1 from teams t where t.id = e.team_id and t.deletion_status <> 'none')),
  leased as (update email_recipients set leased_until = $1
    where email_id = $2 and exists (select 1 from e)
      -- Due and free, as one CASE: the planner cannot match it to email_recipients_pending's predicate, so the
      -- recipients are found by email_id alone. As plain conditions they let a plan read that index (every pending
      -- recipient of every email, and the dead entries until a vacuum) whenever statistics lag, as they do when a
      -- broadcast turns a hundred thousand pending at once: test/mta-lease-plan.test.ts.
      and case when status in ('queued', 'deferred') and (next_attempt_at is null or next_attempt_at <= $3)
        then leased_until is null or leased_until < $3 else false end
    returning ${COLUMNS.join(', ')})
  select (select row_to_json(x.*) from (select ${EMAIL_FIELDS}, attachments from e) x) as email, (select raw from e) as raw,
    (select coalesce(json_agg(leased.*), '[]'::json) from leased) as recipients`;

/**
 * A job's one statement (a named prepared statement, shared/db/prepared.ts): reads the email (and its submitted
 * message from email_raw, as bytes beside the JSON), unless it is no longer queued or sending, and leases its
 * recipients that are due at `now` and free. (email.sent is recorded by the accept statement, or by the release of
 * a scheduled email.) Null when there is nothing to do: no such email, not sendable (its team's deletion is
 * scheduled: its mail waits, shared/teams/deletion.ts), or nobody due and free.
 */
export async function takeLease(
  db: Knex,
  log: Logger,
  emailId: string,
  now: Date,
  renewEveryMs = RENEW_EVERY_MS,
): Promise<LeasedWork | null> {
  const issued = performance.now();
  let current = token(new Date(now.getTime() + LEASE_MS));
  const [row] = await prepared<{ email: LoadedEmail | null; raw: Buffer | null; recipients: LeasedRecipient[] }>(
    db,
    'mta_take_lease_v3',
    TAKE_LEASE_SQL,
    [current, emailId, now],
  );
  if (!row?.email || row.recipients.length === 0) return null;
  const email: LoadedEmail = { ...reviveDates(row.email, EMAIL_DATES), raw: row.raw };
  const recipients = row.recipients.map((r) => reviveDates(r, ['first_deferred_at']));

  const started = performance.now();
  // Until when (this process's monotonic clock) the lease is certainly ours: a token is worth LEASE_MS from the
  // moment its statement was sent, whatever the database's answer took.
  let provenUntil = issued + LEASE_MS;
  let turn: Promise<unknown> = Promise.resolve();
  const use = <T>(work: (t: string) => Promise<T>): Promise<T> => {
    const result = turn.then(() => work(current));
    turn = result.catch(() => undefined);
    return result;
  };
  const heartbeat = setInterval(() => {
    void use(async (old) => {
      // `now` may be a test's clock: the lease moves on from it by the time really spent.
      const sent = performance.now();
      const next = token(new Date(now.getTime() + (sent - started) + LEASE_MS));
      const renewed = await db('email_recipients')
        .where({ email_id: emailId, leased_until: old })
        .update({ leased_until: next });
      // No row holds the token any more: every recipient is recorded, or the lease ran out while the database was
      // away and another job took it. Either way nothing is proven from here on.
      if (renewed === 0) {
        provenUntil = 0;
        clearInterval(heartbeat);
        return;
      }
      current = next;
      provenUntil = sent + LEASE_MS;
    }).catch((err) => log.warn({ err, emailId }, 'delivery.lease_renewal_failed'));
  }, renewEveryMs);
  heartbeat.unref();
  const proven = (marginMs = PROOF_MARGIN_MS) => performance.now() + marginMs < provenUntil;
  return { email, lease: { recipients, use, proven, release: () => clearInterval(heartbeat) } };
}
