// The safety net of delivery, a tick of each mta copy (shared/ticker.ts): every SWEEP_EVERY_MS it finds emails with
// recipients that are due and that no job is about to handle, and enqueues a deliver job for each:
//   - deferred, next_attempt_at passed (the delayed job the last attempt scheduled was lost or ran early);
//   - queued for more than STUCK_QUEUED_MS without a lease (a crash between the accepting commit and the enqueue);
//   - leased past leased_until (a crash, or a kill, in the middle of a delivery).
// Job ids are `<email id>-s<epoch second the recipient became due>`: sweeps repeating before the job runs add
// nothing, and the next due moment gets a new id. A job still waiting under its usual id (the accept path's
// `<email id>`, or the retry's `<email id>-r<second>`) is left to do its work: a backlog is not a crash. One
// 'active' for ACTIVE_GRACE_MS without having leased anything belonged to a worker that died (BullMQ would
// notice only at its next stalled-job check).
import type { Knex } from 'knex';
import type { Queue } from 'bullmq';

export const SWEEP_EVERY_MS = 5_000;
export const STUCK_QUEUED_MS = 10_000;
const SWEEP_LIMIT = 500;

const second = (at: Date) => Math.floor(at.getTime() / 1000);

/** The delayed job that tries a deferred email again at `at` (scheduled by the job that deferred it). */
export const retryJobId = (emailId: string, at: Date) => `${emailId}-r${second(at)}`;
export const sweepJobId = (emailId: string, due: Date) => `${emailId}-s${second(due)}`;

export interface DueEmail {
  emailId: string;
  due: Date;
  /** The job that should be handling it already, if the recipient is not left over from a lost lease. */
  expectedJobId: string | null;
  /** A broadcast's email: its jobs are on the bulk queue. */
  bulk: boolean;
}

interface Row {
  email_id: string;
  status: 'queued' | 'deferred';
  next_attempt_at: Date | null;
  leased_until: Date | null;
  created_at: Date;
  source: string;
}

export async function findDue(db: Knex, now: Date, limit = SWEEP_LIMIT): Promise<DueEmail[]> {
  const stuckBefore = new Date(now.getTime() - STUCK_QUEUED_MS);
  const rows: Row[] = await db('email_recipients as r')
    .join('emails as e', 'e.id', 'r.email_id')
    .whereIn('e.status', ['queued', 'sending'])
    .whereIn('r.status', ['queued', 'deferred'])
    // A team whose deletion is scheduled sends nothing (its mail waits; canceling the deletion lets it go).
    .whereNotExists(db('teams as t').whereRaw('t.id = e.team_id').whereNot('t.deletion_status', 'none'))
    .where((q) =>
      q
        .where('r.leased_until', '<', now)
        .orWhere((d) =>
          d.whereNull('r.leased_until').where('r.status', 'deferred').where('r.next_attempt_at', '<=', now),
        )
        .orWhere((s) =>
          s
            .whereNull('r.leased_until')
            .where('r.status', 'queued')
            .whereRaw('coalesce(r.next_attempt_at, e.created_at) <= ?', [stuckBefore]),
        ),
    )
    .orderByRaw('coalesce(r.leased_until, r.next_attempt_at, e.created_at)')
    .limit(limit * 4)
    .select('r.email_id', 'r.status', 'r.next_attempt_at', 'r.leased_until', 'e.created_at', 'e.source');
  const byEmail = new Map<string, DueEmail>();
  for (const r of rows) {
    if (byEmail.has(r.email_id) || byEmail.size >= limit) continue;
    const bulk = r.source === 'broadcast';
    if (r.leased_until)
      byEmail.set(r.email_id, { emailId: r.email_id, due: r.leased_until, expectedJobId: null, bulk });
    else if (r.status === 'deferred')
      byEmail.set(r.email_id, {
        emailId: r.email_id,
        due: r.next_attempt_at!,
        expectedJobId: retryJobId(r.email_id, r.next_attempt_at!),
        bulk,
      });
    else
      byEmail.set(r.email_id, {
        emailId: r.email_id,
        due: r.next_attempt_at ?? r.created_at,
        expectedJobId: r.email_id,
        bulk,
      });
  }
  return [...byEmail.values()];
}

const WAITING = new Set(['waiting', 'delayed', 'prioritized', 'waiting-children']);
/** A running job leases within moments of starting; one 'active' this long without a lease died with its worker. */
export const ACTIVE_GRACE_MS = 30_000;

/** Is a job on its way to the email: waiting, or running under a living worker? */
async function inHand(queue: Queue, jobId: string, now: Date): Promise<boolean> {
  const job = await queue.getJob(jobId);
  if (!job) return false;
  const state = await job.getState();
  if (state === 'active') return (job.processedOn ?? 0) > now.getTime() - ACTIVE_GRACE_MS;
  return WAITING.has(state);
}

/**
 * Answers how many deliver jobs it added. A broadcast's email (`bulkQueue` given) is looked for and re-enqueued on
 * the bulk queue: a backlog there is not a crash, and must not spill onto the transactional queue.
 */
export async function sweepDeliveries(db: Knex, queue: Queue, now = new Date(), bulkQueue?: Queue): Promise<number> {
  const due = await findDue(db, now);
  const jobs = new Map<Queue, { name: string; data: { emailId: string }; opts: { jobId: string } }[]>();
  for (const d of due) {
    const q = d.bulk && bulkQueue ? bulkQueue : queue;
    if (d.expectedJobId && (await inHand(q, d.expectedJobId, now))) continue;
    const jobId = sweepJobId(d.emailId, d.due);
    // Already added by an earlier sweep (waiting, running, or done and kept): BullMQ would ignore it anyway.
    if ((await q.getJobState(jobId)) !== 'unknown') continue;
    jobs.set(q, [...(jobs.get(q) ?? []), { name: 'deliver', data: { emailId: d.emailId }, opts: { jobId } }]);
  }
  for (const [q, list] of jobs) await q.addBulk(list);
  return [...jobs.values()].reduce((n, list) => n + list.length, 0);
}
