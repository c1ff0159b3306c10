// Delivery: POST each due delivery to its endpoint, signed, and record the attempt. An endpoint is leased (one
// worker, one request in flight at a time, oldest due delivery first, so its events arrive in the order they
// were created as far as retries allow); endpoints are worked independently, so a slow one holds only its own
// lease. A leased endpoint's due deliveries are taken in chunks: sent back to back over a kept-alive connection,
// and their attempts recorded in one transaction (a crash between a 2xx and that commit sends those again:
// at least once, as webhook-id lets a receiver see). A chunk stops at its first failure, so the next chunk
// starts with that delivery's immediate retry, still ahead of the younger ones.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { prepared } from '../db/prepared.ts';
import type { AddressResolver } from '../dns/server-address.ts';
import { signingSecret, type EndpointRow } from './endpoints.ts';
import { signedHeaders } from './sign.ts';
import { postTo, resolveTarget, type Agents, type PostOutcome } from './target.ts';

/**
 * Delay before the next attempt after the n-th failure (CONTRACT): immediately, 5 s, 5 m, 30 m, 2 h, 5 h, 10 h, 10 h.
 */
export const RETRY_DELAYS_MS = [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
/** A first attempt and one per retry; after the last failure the delivery is `failed` and parked. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Long enough for one chunk (at most one 15 s send past CHUNK_MS) and its bookkeeping; renewed per chunk. */
const LEASE_MS = 60_000;
/** Deliveries one chunk takes; their attempts are written together. */
const CHUNK = 100;
/** A chunk sends no more after this long, so its record (and the lease's renewal) does not lag behind. */
const CHUNK_MS = 500;
/** How long one lease keeps an endpoint before it lets it go, so a busy endpoint cannot hold a slot forever. */
const LEASE_WORK_MS = 10_000;
export const RESPONSE_EXCERPT_CHARS = 1024;

export interface DeliverDeps {
  db: Knex;
  secrets: Buffer;
  resolver: AddressResolver;
  allowPrivate: boolean;
  timeoutMs?: number;
  agents?: Agents;
  /** Told of each chunk's attempts once they are recorded (the worker's log lines and metrics: report.ts). */
  recorded?: (sent: Sent[]) => Promise<void>;
}

export interface DeliveryRow {
  id: string;
  team_id: string;
  endpoint_id: string;
  event_id: string;
  type: string;
  payload: string;
  status: 'pending' | 'attempting' | 'success' | 'failed';
  attempt_count: number;
  next_attempt_at: Date | null;
  last_http_status: number | null;
  parked: boolean;
  created_at: Date;
}

const open = ['pending', 'attempting'];

// Run at every pass of the worker's loop (up to ~50 a second while events flow): a named prepared statement, planned
// once per connection (it was planned at every call, 0.3 ms of PostgreSQL's CPU against 0.015 ms of running it).
const LEASE_ENDPOINTS_SQL = `UPDATE webhook_endpoints SET leased_until = ? WHERE id IN (
    SELECT e.id FROM webhook_endpoints e
    WHERE e.status = 'enabled' AND (e.leased_until IS NULL OR e.leased_until < ?) AND NOT (e.id = ANY(?::uuid[]))
      AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.status IN ('pending', 'attempting')
                  AND NOT d.parked AND d.next_attempt_at <= ?)
    ORDER BY e.leased_until NULLS FIRST LIMIT ? FOR UPDATE SKIP LOCKED)
  RETURNING id, team_id, endpoint, events, status, secret_sealed, secret_last4, leased_until, created_at`;

/** Up to `cap` enabled endpoints with something due, least recently served first, each now leased to the caller. */
export async function leaseEndpoints(db: Knex, now: Date, cap: number, exclude: string[] = []): Promise<EndpointRow[]> {
  if (cap <= 0) return [];
  return prepared<EndpointRow>(db, 'pw_webhook_lease_endpoints', LEASE_ENDPOINTS_SQL, [
    new Date(now.getTime() + LEASE_MS),
    now,
    exclude,
    now,
    cap,
  ]);
}

async function dueDeliveries(db: Knex, endpointId: string, now: Date, limit: number): Promise<DeliveryRow[]> {
  return db<DeliveryRow>('webhook_deliveries')
    .where({ endpoint_id: endpointId, parked: false })
    .whereIn('status', open)
    .where('next_attempt_at', '<=', now)
    .orderBy('id')
    .limit(limit);
}

export interface Sent {
  delivery: DeliveryRow;
  outcome: PostOutcome;
  sentAt: Date;
  durationMs: number;
}

/** Records the attempts and moves each delivery: success, a retry on the schedule, or failed and parked. */
export async function recordWebhookAttempts(db: Knex, sent: Sent[]): Promise<void> {
  if (sent.length === 0) return;
  const attempts: Record<string, unknown>[] = [];
  const changes: Record<string, unknown>[] = [];
  for (const { delivery, outcome, sentAt, durationMs } of sent) {
    const n = delivery.attempt_count + 1;
    attempts.push({
      id: newId(),
      delivery_id: delivery.id,
      attempt_number: n,
      http_status_code: outcome.status,
      response: outcome.response === null ? null : outcome.response.slice(0, RESPONSE_EXCERPT_CHARS),
      duration_ms: Math.round(durationMs),
      error: outcome.ok ? null : outcome.error,
      sent_at: sentAt,
    });
    const last = !outcome.ok && n >= MAX_ATTEMPTS;
    changes.push({
      id: delivery.id,
      attempt_count: n,
      last_http_status: outcome.status,
      park: last,
      status: outcome.ok ? 'success' : last ? 'failed' : 'attempting',
      next_attempt_at: outcome.ok || last ? null : new Date(sentAt.getTime() + RETRY_DELAYS_MS[n - 1]).toISOString(),
    });
  }
  await db.transaction(async (trx) => {
    await trx('webhook_attempts').insert(attempts);
    // `parked` only ever set here: an endpoint disabled meanwhile has parked the delivery already.
    await trx.raw(
      `UPDATE webhook_deliveries d SET status = v.status, attempt_count = v.attempt_count, last_http_status = v.last_http_status,
         next_attempt_at = v.next_attempt_at, parked = d.parked OR v.park
       FROM jsonb_to_recordset(?::jsonb) AS v(id uuid, status text, attempt_count int, last_http_status int, next_attempt_at timestamptz, park boolean)
       WHERE d.id = v.id`,
      [JSON.stringify(changes)],
    );
  });
}

/** One attempt, recorded (tests and single sends). */
export async function recordAttempt(
  db: Knex,
  delivery: DeliveryRow,
  outcome: PostOutcome,
  sentAt: Date,
  durationMs: number,
): Promise<void> {
  await recordWebhookAttempts(db, [{ delivery, outcome, sentAt, durationMs }]);
}

/**
 * Works one leased endpoint: chunk after chunk of due deliveries until none is due or LEASE_WORK_MS is spent,
 * then lets the lease go. `clock` says what is due: the real time in the worker, a fixed one in tests.
 */
export async function workEndpoint(
  deps: DeliverDeps,
  endpointId: string,
  clock: () => Date = () => new Date(),
): Promise<number> {
  let sent = 0;
  const started = Date.now();
  try {
    while (Date.now() - started < LEASE_WORK_MS) {
      // Re-read each chunk: the endpoint may have been disabled, moved or given a new secret meanwhile.
      const [endpoint] = (await deps
        .db('webhook_endpoints')
        .where({ id: endpointId, status: 'enabled' })
        .update({ leased_until: new Date(Date.now() + LEASE_MS) })
        .returning('*')) as EndpointRow[];
      if (!endpoint) break;
      const due = await dueDeliveries(deps.db, endpointId, clock(), CHUNK);
      if (due.length === 0) break;
      const target = await resolveTarget(endpoint.endpoint, deps);
      const secret = signingSecret(deps.secrets, endpoint);
      const chunk: Sent[] = [];
      const chunkStarted = Date.now();
      for (const delivery of due) {
        const sentAt = new Date(Math.max(clock().getTime(), Date.now()));
        const headers = signedHeaders(secret, delivery.id, new Date(), delivery.payload);
        const t0 = performance.now();
        const outcome = target.ok ? await postTo(target, headers, delivery.payload, deps) : target.outcome;
        chunk.push({ delivery, outcome, sentAt, durationMs: performance.now() - t0 });
        if (!outcome.ok || Date.now() - chunkStarted >= CHUNK_MS) break;
      }
      await recordWebhookAttempts(deps.db, chunk);
      await deps.recorded?.(chunk);
      sent += chunk.length;
    }
  } finally {
    await deps.db('webhook_endpoints').where({ id: endpointId }).update({ leased_until: null });
  }
  return sent;
}

/**
 * One pass with the clock at `now` (or the real time once it passes `now`), waiting for every leased endpoint
 * to finish (tests, and a single-shot run).
 */
export async function deliverDue(deps: DeliverDeps, now = new Date(), cap = 20): Promise<number> {
  const endpoints = await leaseEndpoints(deps.db, now, cap);
  const clock = () => new Date(Math.max(now.getTime(), Date.now()));
  const sent = await Promise.all(endpoints.map((e) => workEndpoint(deps, e.id, clock)));
  return sent.reduce((a, b) => a + b, 0);
}

/**
 * The worker's pool: each tick leases endpoints up to the free slots and starts them without waiting, so an
 * endpoint that takes 15 s to answer never delays another. When an endpoint's work ends, the pool ticks again:
 * deliveries made while it was finishing (the tick that came with them skipped it as still running) go at once.
 */
export function deliveryPool(deps: DeliverDeps, cap: number, onError: (err: unknown, endpointId?: string) => void) {
  const running = new Map<string, Promise<unknown>>();
  let ticking: Promise<number> | undefined;
  let again = false;
  let stopped = false;

  async function leaseAndStart(): Promise<number> {
    const leased = await leaseEndpoints(deps.db, new Date(), cap - running.size, [...running.keys()]);
    for (const e of leased) {
      // After an error the next regular tick comes back to it, so a failing endpoint cannot spin.
      const work = workEndpoint(deps, e.id).then(
        () => {
          running.delete(e.id);
          if (!stopped) void pool.tick().catch((err) => onError(err));
        },
        (err) => {
          running.delete(e.id);
          onError(err, e.id);
        },
      );
      running.set(e.id, work);
    }
    return leased.length;
  }

  const pool = {
    /**
     * Leases and starts what is due; a call during a tick makes that tick run once more. Answers how many it started.
     */
    tick(): Promise<number> {
      if (stopped) return Promise.resolve(0);
      if (ticking) {
        again = true;
        return ticking;
      }
      ticking = (async () => {
        let started = 0;
        try {
          do {
            again = false;
            started += await leaseAndStart();
          } while (again && !stopped);
        } finally {
          ticking = undefined;
        }
        return started;
      })();
      return ticking;
    },
    get running(): number {
      return running.size;
    },
    /** Starts nothing more and waits for what runs. */
    async drain(): Promise<void> {
      stopped = true;
      await ticking?.catch(() => undefined);
      await Promise.allSettled([...running.values()]);
    },
  };
  return pool;
}
