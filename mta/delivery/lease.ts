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
import { batched } from './batched.ts';

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

const LEASES_STATEMENT = 'mta_take_leases_v1';

/**
 * The lease's statement, for one job (takeLease) or many at once (createLeaseGroup): $1 their tokens, $2 their emails,
 * $3 their nows, as arrays in the same order. Reads each email and leases its recipients that are due and free, under
 * the job's own token and clock: a row per email that is sendable.
 */
export const TAKE_LEASES_SQL = `with q as (select * from unnest($1::timestamptz[], $2::uuid[], $3::timestamptz[]) as q(token, id, now)),
  e as (
    select ${EMAIL_COLUMNS}, r.bytes as raw, case when e.raw_blob_key is null and r.email_id is null then (
      select coalesce(json_agg(json_build_object('filename', a.filename, 'content_type', a.content_type, 'content_id', a.content_id,
        'content_disposition', a.content_disposition, 'blob_key', a.blob_key) order by a.position), '[]'::json)
      from email_attachments a where a.email_id = e.id) end as attachments
    from q join emails e on e.id = q.id left join email_raw r on r.email_id = e.id where e.status in ('queued', 'sending')
      and not exists (select 1 from teams t where t.id = e.team_id and t.deletion_status <> 'none')),
  leased as (update email_recipients r set leased_until = q.token from q
    where r.email_id = q.id and q.id in (select id from e)
      -- Due and free, as one CASE: the planner cannot match it to email_recipients_pending's predicate, so the
      -- recipients are found by email_id alone. As plain conditions they let a plan read that index (every pending
      -- recipient of every email, and the dead entries until a vacuum) whenever statistics lag, as they do when a
      -- broadcast turns a hundred thousand pending at once: test/mta-lease-plan.test.ts.
      and case when r.status in ('queued', 'deferred') and (r.next_attempt_at is null or r.next_attempt_at <= q.now)
        then r.leased_until is null or r.leased_until < q.now else false end
    returning ${COLUMNS.map((c) => `r.${c}`).join(', ')})
  select x.id, row_to_json(x.*) as email, (select raw from e where e.id = x.id) as raw,
    (select coalesce(json_agg(l.*), '[]'::json) from leased l where l.email_id = x.id) as recipients
  from (select ${EMAIL_FIELDS}, attachments from e) x`;

/** A job asking for its lease: its email, its clock, and when it read that clock (this process's monotonic one). */
interface Asked {
  emailId: string;
  now: Date;
  asked: number;
}

/**
 * A token at `sent` (this process's monotonic clock) on the job's own clock: it runs LEASE_MS from that moment,
 * however long the job waited before (for a batch's turn, for a renewal's).
 */
const tokenAt = (job: Asked, sent: number) => token(new Date(job.now.getTime() + (sent - job.asked) + LEASE_MS));

interface LeaseRow {
  id: string;
  email: LoadedEmail | null;
  raw: Buffer | null;
  recipients: LeasedRecipient[];
}

/** One lease statement for any number of jobs of distinct emails: each job's work, in their order. */
async function takeLeases(
  db: Knex,
  log: Logger,
  jobs: Asked[],
  renewEveryMs = RENEW_EVERY_MS,
): Promise<(LeasedWork | null)[]> {
  const issued = performance.now();
  const tokens = jobs.map((job) => tokenAt(job, issued));
  const rows = await prepared<LeaseRow>(db, LEASES_STATEMENT, TAKE_LEASES_SQL, [
    tokens,
    jobs.map((job) => job.emailId),
    jobs.map((job) => job.now),
  ]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return jobs.map((job, i) => {
    const row = byId.get(job.emailId);
    return row ? leaseOf(db, log, job, { token: tokens[i], issued }, row, renewEveryMs) : null;
  });
}

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
  const [work] = await takeLeases(db, log, [{ emailId, now, asked: performance.now() }], renewEveryMs);
  return work;
}

/** The job's work from its statement's row, with the heartbeat that renews its lease. Null when nothing was leased. */
function leaseOf(
  db: Knex,
  log: Logger,
  job: Asked,
  taken: { token: string; issued: number },
  row: LeaseRow,
  renewEveryMs: number,
): LeasedWork | null {
  const { emailId } = job;
  let current = taken.token;
  if (!row.email || row.recipients.length === 0) return null;
  const email: LoadedEmail = { ...reviveDates(row.email, EMAIL_DATES), raw: row.raw };
  const recipients = row.recipients.map((r) => reviveDates(r, ['first_deferred_at']));
  // Until when (this process's monotonic clock) the lease is certainly ours: a token is worth LEASE_MS from the
  // moment its statement was sent, whatever the database's answer took.
  let provenUntil = taken.issued + LEASE_MS;
  let turn: Promise<unknown> = Promise.resolve();
  const use = <T>(work: (t: string) => Promise<T>): Promise<T> => {
    const result = turn.then(() => work(current));
    turn = result.catch(() => undefined);
    return result;
  };
  const heartbeat = setInterval(() => {
    void use(async (old) => {
      // `now` may be a test's clock: the lease moves on from it by the time really spent since the job read it.
      const sent = performance.now();
      const next = tokenAt(job, sent);
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

/** Takes the lease of one job's email (processDelivery). */
export type LeaseFn = (emailId: string, now: Date) => Promise<LeasedWork | null>;

/** At most this many jobs' leases in one statement. */
const MAX_LEASES = 100;

/**
 * Leases taken the way records are committed (batched.ts): the jobs that ask while a lease statement runs go together
 * in the next one, each with its own token and clock. Two jobs of one email never share a statement (the later one
 * waits for the next, where it finds the recipients leased, as it would have alone).
 */
export function createLeaseGroup(db: Knex, log: Logger, max = MAX_LEASES): LeaseFn {
  const lease = batched<Asked, LeasedWork | null>({
    run: (jobs) => takeLeases(db, log, jobs),
    max,
    log,
    failedEvent: 'delivery.lease_group_failed',
    key: (job) => job.emailId,
  });
  return (emailId, now) => lease({ emailId, now, asked: performance.now() });
}
