// The webhooks jobs: fan events out to endpoints, and send what is due. One repeatable `tick` does both, every
// TICK_MS; the sends run in a pool that the tick does not wait for, so a slow endpoint holds only its own slot.
import type { Knex } from 'knex';
import type { Logger } from '../../shared/logger.ts';
import type { AddressResolver } from '../../shared/dns/server-address.ts';
import { fanOutAll } from '../../shared/webhooks/fanout.ts';
import { deliveryPool } from '../../shared/webhooks/deliver.ts';

export const TICK_MS = 500;
/** Endpoints one worker process sends to at once. */
export const ENDPOINTS_IN_FLIGHT = 50;

export interface WebhookJobDeps {
  db: Knex;
  secrets: Buffer;
  resolver: AddressResolver;
  allowPrivate: boolean;
  log: Logger;
}

export function webhookRunner(deps: WebhookJobDeps) {
  const pool = deliveryPool(deps, ENDPOINTS_IN_FLIGHT, (err, endpointId) => deps.log.error({ err, endpointId }, 'webhook.delivery_failed'));
  return {
    async tick(now = new Date()): Promise<{ fanned_out: number; endpoints_started: number }> {
      const fanned_out = await fanOutAll(deps.db, now);
      const endpoints_started = await pool.tick(now);
      return { fanned_out, endpoints_started };
    },
    drain: () => pool.drain(),
  };
}
