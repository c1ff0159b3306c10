// The fan-out of one broadcast (the worker's job, data {broadcastId}): take the broadcast's lease with one
// conditional UPDATE (queued, scheduled and due, or sending with a lease run out: a crashed run's), then walk its
// segment in batches. Each batch is ONE transaction under the row lock: check the lease and the status are still
// ours (a cancel or another run stops us here), materialise the next recipients (audience.ts), write their emails
// (fanout-rows.ts), move the cursor and the counts, renew the lease; the last one marks the broadcast `sent`. Only
// after its commit are the batch's emails handed to the mta's bulk queue (a lost hand-over is recovered by the
// mta's sweep, as for any email). A SIGKILL at any moment loses at most an uncommitted batch, which the next run
// (after the lease runs out) does again from the committed cursor; the unique (broadcast_id, email) key and the
// cursor move together, so nobody is mailed twice.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import type { Logger } from '../logger.ts';
import type { EnqueueDelivery } from '../emails/enqueue.ts';
import { senderDomain } from '../emails/rules.ts';
import type { SegmentRow } from '../segments/segments.ts';
import { materialiseBatch } from './audience.ts';
import { fromDomain } from './content.ts';
import { compileBroadcast, mergeContext, writeEmails, type CompiledBroadcast, type LinkDeps } from './fanout-rows.ts';
import type { BroadcastRow } from './store.ts';

export interface FanoutDeps extends LinkDeps {
  db: Knex;
  log: Logger;
  /** Hands committed emails to the mta (its bulk queue). */
  enqueue: EnqueueDelivery;
  /** Contacts walked per batch. */
  batchSize: number;
  /** How long a run's hold on the broadcast lasts without a batch committing. */
  leaseMs: number;
  /** Aborted when the process stops: the run ends after its batch in hand and gives its lease back. */
  signal?: AbortSignal;
  /**
   * Back-pressure: before each batch the run waits while more than `max` deliveries wait in the mta's queue, so the
   * audience is written as delivery drains it (a 100,000-recipient send does not put its whole load on PostgreSQL in
   * its first minute, nor 100,000 jobs in Redis). Absent: batches follow each other at once.
   */
  backlog?: { waiting: () => Promise<number>; max: number; pollMs: number };
}

export type FanoutOutcome = 'sent' | 'canceled' | 'failed' | 'paused' | 'not due' | 'superseded';

const leaseUntil = (deps: FanoutDeps) => new Date(Date.now() + deps.leaseMs);

/** Takes the broadcast for this run; null when it has nothing to do now or another live run holds it. */
async function claim(deps: FanoutDeps, id: string, token: string): Promise<BroadcastRow | null> {
  const [row] = await deps
    .db<BroadcastRow>('broadcasts')
    .where({ id })
    .where((q) =>
      q
        .where({ status: 'queued' })
        .orWhere((s) => s.where({ status: 'scheduled' }).where('scheduled_at', '<=', deps.db.fn.now()))
        .orWhere((s) =>
          s
            .where({ status: 'sending' })
            .where((l) => l.whereNull('leased_until').orWhere('leased_until', '<', new Date())),
        ),
    )
    .update({
      status: 'sending',
      started_at: deps.db.raw('coalesce(started_at, now())') as never,
      lease_token: token,
      leased_until: leaseUntil(deps),
      updated_at: deps.db.fn.now() as never,
    })
    .returning('*');
  return row ?? null;
}

async function fail(deps: FanoutDeps, b: BroadcastRow, token: string, reason: string): Promise<FanoutOutcome> {
  await deps.db('broadcasts').where({ id: b.id, status: 'sending', lease_token: token }).update({
    status: 'failed',
    failure_reason: reason,
    lease_token: null,
    leased_until: null,
    updated_at: new Date(),
  });
  deps.log.warn({ broadcastId: b.id, reason }, 'broadcast.failed');
  return 'failed';
}

/** What the run needs besides the row: its segment, its topic's default, its domain; or why it cannot go. */
async function prepare(deps: FanoutDeps, b: BroadcastRow) {
  const segment: SegmentRow | undefined = b.segment_id
    ? await deps.db('segments').where({ team_id: b.team_id, id: b.segment_id }).first()
    : undefined;
  if (!segment) return { reason: 'the segment was deleted before the broadcast was sent' };
  let topicDefault: 'opt_in' | 'opt_out' | null = null;
  if (b.topic_id) {
    const topic = await deps.db('topics').where({ team_id: b.team_id, id: b.topic_id }).first('default_subscription');
    if (!topic) return { reason: 'the topic was deleted before the broadcast was sent' };
    topicDefault = topic.default_subscription;
  }
  let domain;
  try {
    domain = await senderDomain(deps.db, { id: b.team_id }, null, fromDomain(b.from));
  } catch (err) {
    return { reason: `the sender's domain cannot send: ${(err as Error).message}` };
  }
  const compiled = compileBroadcast(b, await mergeContext(deps.db, b.team_id), domain);
  return { segment, topicDefault, compiled };
}

interface Run {
  token: string;
  segment: SegmentRow;
  topicDefault: 'opt_in' | 'opt_out' | null;
  compiled: CompiledBroadcast;
}

/** One batch in one transaction; answers the emails to hand over and whether the walk is over, or null (not ours). */
async function batch(deps: FanoutDeps, id: string, run: Run) {
  return deps.db.transaction(async (trx) => {
    await trx.raw(`select set_config('jit', 'off', true), set_config('work_mem', '32MB', true)`);
    const b: BroadcastRow | undefined = await trx('broadcasts').where({ id }).forUpdate().first();
    if (!b || b.status !== 'sending' || b.lease_token !== run.token) return { stop: b?.status ?? 'gone' };
    const now = new Date();
    const m = await materialiseBatch(trx, b, run.segment, run.topicDefault, b.cursor, deps.batchSize);
    const emailIds = await writeEmails(trx, run.compiled, m.sent, deps, now);
    const done = m.scanned < deps.batchSize;
    await trx('broadcasts')
      .where({ id })
      .update({
        cursor: m.lastId ?? b.cursor,
        recipients_count: b.recipients_count + m.sent.length,
        suppressed_count: b.suppressed_count + m.suppressed,
        batches: b.batches + 1,
        updated_at: now,
        ...(done
          ? { status: 'sent', sent_at: now, lease_token: null, leased_until: null }
          : { leased_until: leaseUntil(deps) }),
      });
    return { emailIds, done };
  });
}

/**
 * Waits while the mta's backlog is over its mark, renewing the lease at each look (a waiting run stays the live one);
 * answers 'go', or how the run ends meanwhile: canceled or taken over, or paused when the process stops.
 */
async function awaitBacklog(deps: FanoutDeps, id: string, token: string): Promise<'go' | FanoutOutcome> {
  if (!deps.backlog) return 'go';
  while ((await deps.backlog.waiting()) > deps.backlog.max) {
    if (deps.signal?.aborted) break;
    const renewed = await deps
      .db('broadcasts')
      .where({ id, status: 'sending', lease_token: token })
      .update({ leased_until: leaseUntil(deps) });
    if (!renewed) {
      const b = await deps.db('broadcasts').where({ id }).first('status');
      return b?.status === 'canceled' ? 'canceled' : 'superseded';
    }
    await new Promise((r) => setTimeout(r, deps.backlog!.pollMs));
  }
  return deps.signal?.aborted ? pause(deps, id, token) : 'go';
}

/** Stopping: the lease goes back at once, so another worker resumes from the committed cursor. */
async function pause(deps: FanoutDeps, id: string, token: string): Promise<FanoutOutcome> {
  await deps
    .db('broadcasts')
    .where({ id, lease_token: token })
    .update({ leased_until: new Date(0) });
  return 'paused';
}

/** Runs the broadcast's fan-out from where it stands; answers how it ended. */
export async function runBroadcast(deps: FanoutDeps, id: string): Promise<FanoutOutcome> {
  const token = newId();
  const b = await claim(deps, id, token);
  if (!b) return 'not due';
  const ready = await prepare(deps, b);
  if ('reason' in ready) return fail(deps, b, token, ready.reason!);
  const run: Run = { token, segment: ready.segment, topicDefault: ready.topicDefault, compiled: ready.compiled };
  deps.log.info({ broadcastId: id, cursor: b.cursor }, 'broadcast.sending');
  for (;;) {
    const held = await awaitBacklog(deps, id, token);
    if (held !== 'go') return held;
    const result = await batch(deps, id, run);
    if ('stop' in result) return result.stop === 'canceled' ? 'canceled' : 'superseded';
    await deps.enqueue(result.emailIds);
    if (result.done) {
      deps.log.info({ broadcastId: id }, 'broadcast.sent');
      return 'sent';
    }
    if (deps.signal?.aborted) return pause(deps, id, token);
  }
}

/** Broadcasts with work to do now (the worker's sweep hands each to a job): queued, due, or a lost run's. */
export async function dueBroadcasts(db: Knex, now: Date, limit = 100): Promise<string[]> {
  return db('broadcasts')
    .where((q) =>
      q
        .where({ status: 'queued' })
        .orWhere((s) => s.where({ status: 'scheduled' }).where('scheduled_at', '<=', now))
        .orWhere((s) =>
          s.where({ status: 'sending' }).where((l) => l.whereNull('leased_until').orWhere('leased_until', '<', now)),
        ),
    )
    .orderBy('updated_at')
    .limit(limit)
    .pluck('id');
}
