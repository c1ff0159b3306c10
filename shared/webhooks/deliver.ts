// Delivery: POST each due delivery to its endpoint, signed, and record the attempt. An endpoint is leased (one
// worker, one request in flight at a time, oldest due delivery first, so its events arrive in the order they
// happened as far as retries allow); endpoints are worked independently, so a slow one holds only its own lease.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import type { AddressResolver } from '../dns/server-address.ts';
import { signingSecret, type EndpointRow } from './endpoints.ts';
import { signedHeaders } from './sign.ts';
import { postSigned, type PostOutcome } from './target.ts';

/** Delay before the next attempt after the n-th failure (CONTRACT): immediately, 5 s, 5 m, 30 m, 2 h, 5 h, 10 h, 10 h. */
export const RETRY_DELAYS_MS = [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
/** A first attempt and one per retry; after the last failure the delivery is `failed` and parked. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Long enough for one send (15 s) and its bookkeeping; renewed before each send, so a crash frees it soon. */
const LEASE_MS = 60_000;
/** Sends one lease makes before it lets the endpoint go (and a retried "immediately" cannot spin). */
const SENDS_PER_LEASE = 50;
export const RESPONSE_EXCERPT_CHARS = 1024;

export interface DeliverDeps {
  db: Knex;
  secrets: Buffer;
  resolver: AddressResolver;
  allowPrivate: boolean;
  timeoutMs?: number;
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

/** Up to `cap` enabled endpoints with something due, least recently served first, each now leased to the caller. */
export async function leaseEndpoints(db: Knex, now: Date, cap: number, exclude: string[] = []): Promise<EndpointRow[]> {
  if (cap <= 0) return [];
  const { rows } = await db.raw(
    `UPDATE webhook_endpoints SET leased_until = ? WHERE id IN (
       SELECT e.id FROM webhook_endpoints e
       WHERE e.status = 'enabled' AND (e.leased_until IS NULL OR e.leased_until < ?) AND NOT (e.id = ANY(?::uuid[]))
         AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.status IN ('pending', 'attempting')
                     AND NOT d.parked AND d.next_attempt_at <= ?)
       ORDER BY e.leased_until NULLS FIRST LIMIT ? FOR UPDATE SKIP LOCKED)
     RETURNING *`,
    [new Date(now.getTime() + LEASE_MS), now, exclude, now, cap],
  );
  return rows as EndpointRow[];
}

async function nextDue(db: Knex, endpointId: string, now: Date): Promise<DeliveryRow | undefined> {
  return db<DeliveryRow>('webhook_deliveries')
    .where({ endpoint_id: endpointId, parked: false })
    .whereIn('status', open)
    .where('next_attempt_at', '<=', now)
    .orderBy('id')
    .first();
}

/** Records the attempt and moves the delivery: success, a retry on the schedule, or failed and parked. */
export async function recordAttempt(db: Knex, delivery: DeliveryRow, outcome: PostOutcome, sentAt: Date, durationMs: number) {
  const attemptNumber = delivery.attempt_count + 1;
  await db.transaction(async (trx) => {
    await trx('webhook_attempts').insert({
      id: newId(), delivery_id: delivery.id, attempt_number: attemptNumber, http_status_code: outcome.status,
      response: outcome.response === null ? null : outcome.response.slice(0, RESPONSE_EXCERPT_CHARS),
      duration_ms: Math.round(durationMs), error: outcome.ok ? null : outcome.error, sent_at: sentAt,
    });
    const change: Record<string, unknown> = { attempt_count: attemptNumber, last_http_status: outcome.status };
    if (outcome.ok) Object.assign(change, { status: 'success', next_attempt_at: null });
    else if (attemptNumber >= MAX_ATTEMPTS) Object.assign(change, { status: 'failed', next_attempt_at: null, parked: true });
    else Object.assign(change, { status: 'attempting', next_attempt_at: new Date(sentAt.getTime() + RETRY_DELAYS_MS[attemptNumber - 1]) });
    await trx('webhook_deliveries').where({ id: delivery.id }).update(change);
  });
}

/** Sends an endpoint's due deliveries one at a time, then frees its lease. `now` is the clock of the whole run. */
export async function workEndpoint(deps: DeliverDeps, endpointId: string, now: Date): Promise<number> {
  let sent = 0;
  try {
    while (sent < SENDS_PER_LEASE) {
      // Re-read each time: the endpoint may have been disabled, moved or given a new secret meanwhile.
      const [endpoint] = (await deps.db('webhook_endpoints')
        .where({ id: endpointId, status: 'enabled' })
        .update({ leased_until: new Date(Date.now() + LEASE_MS) })
        .returning('*')) as EndpointRow[];
      if (!endpoint) break;
      const delivery = await nextDue(deps.db, endpointId, now);
      if (!delivery) break;
      const sentAt = new Date(Math.max(now.getTime(), Date.now()));
      const headers = signedHeaders(signingSecret(deps.secrets, endpoint), delivery.id, new Date(), delivery.payload);
      const started = performance.now();
      const outcome = await postSigned(endpoint.endpoint, headers, delivery.payload, {
        resolver: deps.resolver, allowPrivate: deps.allowPrivate, timeoutMs: deps.timeoutMs,
      });
      await recordAttempt(deps.db, delivery, outcome, sentAt, performance.now() - started);
      sent += 1;
    }
  } finally {
    await deps.db('webhook_endpoints').where({ id: endpointId }).update({ leased_until: null });
  }
  return sent;
}

/** One pass, waiting for every leased endpoint to finish (tests, and a single-shot run). */
export async function deliverDue(deps: DeliverDeps, now = new Date(), cap = 20): Promise<number> {
  const endpoints = await leaseEndpoints(deps.db, now, cap);
  const sent = await Promise.all(endpoints.map((e) => workEndpoint(deps, e.id, now)));
  return sent.reduce((a, b) => a + b, 0);
}

/**
 * The worker's pool: each tick leases endpoints up to the free slots and starts them without waiting, so an
 * endpoint that takes 15 s to answer never delays the next tick's other endpoints.
 */
export function deliveryPool(deps: DeliverDeps, cap: number, onError: (err: unknown, endpointId: string) => void) {
  const running = new Map<string, Promise<unknown>>();
  return {
    async tick(now = new Date()): Promise<number> {
      const leased = await leaseEndpoints(deps.db, now, cap - running.size, [...running.keys()]);
      for (const e of leased) {
        const work = workEndpoint(deps, e.id, now)
          .catch((err) => onError(err, e.id))
          .finally(() => running.delete(e.id));
        running.set(e.id, work);
      }
      return leased.length;
    },
    async drain(): Promise<void> {
      await Promise.allSettled([...running.values()]);
    },
  };
}
