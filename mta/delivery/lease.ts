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
  const taken = token(new Date(now.getTime() + LEASE_MS));
  const [row] = await prepared<LeaseRow>(db, LEASES_STATEMENT, TAKE_LEASES_SQL, [[taken], [emailId], [now]]);
  return row ? leaseOf(db, log, { emailId, now, token: taken, issued }, row, renewEveryMs) : null;
}

interface LeaseRow {
  email: LoadedEmail | null;
  raw: Buffer | null;
  recipients: LeasedRecipient[];
}

interface Asked {
  emailId: string;
  now: Date;
  /** The token the statement wrote. */
  token: string;
  /** When the statement was sent (this process's monotonic clock). */
  issued: number;
}

/** The job's work from its statement's row, with the heartbeat that renews its lease. Null when nothing was leased. */
function leaseOf(db: Knex, log: Logger, asked: Asked, row: LeaseRow, renewEveryMs = RENEW_EVERY_MS): LeasedWork | null {
  const { emailId, now, issued } = asked;
  let current = asked.token;
  if (!row.email || row.recipients.length === 0) return null;
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

/** Takes the lease of one job's email (processDelivery). */
export type LeaseFn = (emailId: string, now: Date) => Promise<LeasedWork | null>;

/** At most this many jobs' leases in one statement. */
const MAX_LEASES = 100;

interface Waiting {
  emailId: string;
  now: Date;
  /** When the job asked (this process's monotonic clock). */
  asked: number;
  resolve: (work: LeasedWork | null) => void;
  reject: (err: unknown) => void;
}

/**
 * Leases taken the way records are committed (group-commit.ts): the jobs that ask while a lease statement runs wait
 * and go together in the next one (TAKE_LEASES_SQL), each with its own token and clock, so under load a job's lease
 * costs a fraction of a statement and of a WAL flush, and alone it waits for nothing. Two jobs of one email never
 * share a statement (the later one waits for the next, where it finds the recipients leased, as it would have alone).
 * A failed batch (a deadlock with another mta copy's, say) is taken again one job at a time.
 */
export function createLeaseGroup(db: Knex, log: Logger, max = MAX_LEASES): LeaseFn {
  const queue: Waiting[] = [];
  let flushing = false;

  async function takeBatch(batch: Waiting[]): Promise<void> {
    const issued = performance.now();
    // Each token runs LEASE_MS from the statement's sending on the job's own clock, however long the job waited for it.
    const tokens = batch.map((w) => token(new Date(w.now.getTime() + (issued - w.asked) + LEASE_MS)));
    const rows = await prepared<LeaseRow & { id: string }>(db, LEASES_STATEMENT, TAKE_LEASES_SQL, [
      tokens,
      batch.map((w) => w.emailId),
      batch.map((w) => w.now),
    ]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    batch.forEach((w, i) => {
      const row = byId.get(w.emailId);
      w.resolve(row ? leaseOf(db, log, { emailId: w.emailId, now: w.now, token: tokens[i], issued }, row) : null);
    });
  }

  /** The next batch: the first `max` waiting jobs of distinct emails, in their order. */
  function nextBatch(): Waiting[] {
    const ids = new Set<string>();
    const batch: Waiting[] = [];
    for (let i = 0; i < queue.length && batch.length < max;) {
      if (ids.has(queue[i].emailId)) {
        i++;
        continue;
      }
      ids.add(queue[i].emailId);
      batch.push(...queue.splice(i, 1));
    }
    return batch;
  }

  async function flush(): Promise<void> {
    try {
      while (queue.length) {
        const batch = nextBatch();
        try {
          await takeBatch(batch);
        } catch (err) {
          if (batch.length === 1) {
            batch[0].reject(err);
            continue;
          }
          log.warn({ err, leases: batch.length }, 'delivery.lease_group_failed');
          for (const w of batch) await takeLease(db, log, w.emailId, w.now).then(w.resolve, w.reject);
        }
      }
    } finally {
      flushing = false;
    }
  }

  return (emailId, now) =>
    new Promise<LeasedWork | null>((resolve, reject) => {
      queue.push({ emailId, now, asked: performance.now(), resolve, reject });
      if (flushing) return;
      flushing = true;
      setImmediate(() => void flush());
    });
}
