// Reading and steering an endpoint's deliveries (the api's "webhook events"): list, retrieve, attempts, replay
// one, and hand the parked ones back to delivery a bounded number per call.
import type { Knex } from 'knex';
import { ServiceError } from '../errors.ts';
import { paginate, type ListQuery } from '../pagination.ts';
import type { DeliveryRow } from './deliver.ts';
import type { EndpointRow } from './endpoints.ts';

export interface AttemptRow {
  id: string;
  delivery_id: string;
  attempt_number: number;
  http_status_code: number | null;
  response: string | null;
  duration_ms: number;
  error: string | null;
  sent_at: Date;
}

/** Deliveries one deliver-parked call hands back; what is left waits for the next call. */
export const PARKED_PER_CALL = 100;

export async function listDeliveries(db: Knex, endpointId: string, page: ListQuery, parkedOnly = false) {
  const q = db('webhook_deliveries').where({ endpoint_id: endpointId });
  if (parkedOnly) q.where({ parked: true });
  return paginate<DeliveryRow>(q, page);
}

export async function findDelivery(db: Knex, endpointId: string, id: string): Promise<DeliveryRow | undefined> {
  return db('webhook_deliveries').where({ endpoint_id: endpointId, id }).first();
}

export async function listAttempts(db: Knex, deliveryId: string, page: ListQuery) {
  return paginate<AttemptRow>(db('webhook_attempts').where({ delivery_id: deliveryId }), page);
}

function mustBeEnabled(endpoint: EndpointRow): void {
  if (endpoint.status !== 'enabled') {
    throw new ServiceError(
      'validation_error',
      'The endpoint is disabled: enable it first (its events stay parked until then).',
      {
        errors: [{ path: 'status', message: 'endpoint is disabled' }],
      },
    );
  }
}

/**
 * One more attempt, as soon as the worker comes by. A delivery that had used its retries gets exactly this one
 * (a failure parks it again); one never tried (parked by a disabled endpoint) starts the whole schedule.
 */
export async function replay(db: Knex, endpoint: EndpointRow, delivery: DeliveryRow, now = new Date()): Promise<void> {
  mustBeEnabled(endpoint);
  await db('webhook_deliveries')
    .where({ id: delivery.id })
    .update({
      parked: false,
      next_attempt_at: now,
      status: delivery.attempt_count > 0 ? 'attempting' : 'pending',
    });
}

export interface ParkedDelivery {
  delivered: number;
  remaining: number;
  stopped_reason: 'rate_limit_exceeded' | null;
}

/** Hands up to `limit` parked deliveries back to delivery, oldest first. */
export async function deliverParked(
  db: Knex,
  endpoint: EndpointRow,
  now = new Date(),
  limit = PARKED_PER_CALL,
): Promise<ParkedDelivery> {
  mustBeEnabled(endpoint);
  return db.transaction(async (trx) => {
    const ids: string[] = await trx('webhook_deliveries')
      .where({ endpoint_id: endpoint.id, parked: true })
      .orderBy('id')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .pluck('id');
    if (ids.length) {
      await trx('webhook_deliveries')
        .whereIn('id', ids)
        .update({
          parked: false,
          next_attempt_at: now,
          status: trx.raw("CASE WHEN attempt_count > 0 THEN 'attempting' ELSE 'pending' END"),
        });
    }
    const [{ count }] = await trx('webhook_deliveries')
      .where({ endpoint_id: endpoint.id, parked: true })
      .count({ count: '*' });
    const remaining = Number(count);
    return {
      delivered: ids.length,
      remaining,
      stopped_reason: remaining > 0 && ids.length === limit ? 'rate_limit_exceeded' : null,
    };
  });
}
