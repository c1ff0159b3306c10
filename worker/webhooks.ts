// The webhooks job of the worker: fan events out to endpoints, then send what is due. It runs in the worker
// process itself, not from a queue: a NOTIFY on `events` (sent by PostgreSQL when an inserting transaction
// commits) wakes it at once, and a poll every POLL_MS finds retries come due and covers a lost listener. Passes
// run one at a time; a wake during a pass runs one more. The sends run in a pool the pass does not wait for, so
// a slow endpoint holds only its own slot.
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger.ts';
import type { AddressResolver } from '../shared/dns/server-address.ts';
import { fanOutAll } from '../shared/webhooks/fanout.ts';
import { deliveryPool, type Sent } from '../shared/webhooks/deliver.ts';
import { createAgents } from '../shared/webhooks/target.ts';
import { reportWebhookAttempts } from '../shared/webhooks/report.ts';
import type { WorkerMetrics } from '../shared/metrics/worker.ts';

/** Retries come due on the clock, not by a notification: this is how late one may start. */
export const POLL_MS = 500;
/** Endpoints one worker process sends to at once. */
export const ENDPOINTS_IN_FLIGHT = 50;
/** Looking again while committed events wait behind an older running transaction: from this, doubling. */
const WAIT_FIRST_MS = 5;
const WAIT_MAX_MS = 200;
const RELISTEN_MS = 1000;

/** A dedicated connection for LISTEN (a pg Client): the wiring file makes it. */
export interface Listener {
  query(sql: string): Promise<unknown>;
  on(event: 'notification', fn: () => void): unknown;
  on(event: 'error', fn: (err: Error) => void): unknown;
  on(event: 'end', fn: () => void): unknown;
  end(): Promise<void>;
}

export interface WebhookJobDeps {
  db: Knex;
  secrets: Buffer;
  resolver: AddressResolver;
  allowPrivate: boolean;
  log: Logger;
  /** Opens a LISTEN connection; without one the job polls only. */
  listen?: () => Promise<Listener>;
  metrics?: Pick<WorkerMetrics, 'webhookDeliveries' | 'webhookLag'>;
}

export function webhookService(deps: WebhookJobDeps) {
  const onError = (err: unknown, endpointId?: string) => deps.log.error({ err, endpointId }, 'webhook.delivery_failed');
  // Each recorded attempt is logged (with the email's request id) and counted: shared/webhooks/report.ts.
  const recorded = (sent: Sent[]) => reportWebhookAttempts(deps, sent);
  const pool = deliveryPool({ ...deps, agents: createAgents(), recorded }, ENDPOINTS_IN_FLIGHT, onError);
  let stopped = false;
  let passing: Promise<void> | undefined;
  let again = false;
  let waitMs = WAIT_FIRST_MS;
  let soon: NodeJS.Timeout | undefined;
  let poll: NodeJS.Timeout | undefined;
  let listener: Listener | undefined;

  async function pass(): Promise<void> {
    const t0 = Date.now();
    const fanned = await fanOutAll(deps.db);
    await pool.tick();
    if (fanned.events) deps.log.debug({ ms: Date.now() - t0, ...fanned }, 'webhook.pass');
    if (fanned.waiting || fanned.busy) {
      // Not news anyone will announce (the transaction holding them back may write no event): look again soon.
      clearTimeout(soon);
      soon = setTimeout(wake, waitMs);
      waitMs = Math.min(waitMs * 2, WAIT_MAX_MS);
    } else {
      waitMs = WAIT_FIRST_MS;
    }
  }

  function wake(): void {
    if (stopped) return;
    if (passing) {
      again = true;
      return;
    }
    passing = (async () => {
      do {
        again = false;
        await pass().catch((err) => deps.log.error({ err }, 'webhook.pass_failed'));
      } while (again && !stopped);
      passing = undefined;
    })();
  }

  async function startListening(): Promise<void> {
    if (!deps.listen || stopped) return;
    try {
      const l = await deps.listen();
      l.on('notification', wake);
      const lost = (err?: Error) => {
        if (listener !== l) return;
        listener = undefined;
        deps.log.warn({ err }, 'webhook.listener_lost');
        void l.end().catch(() => undefined);
        if (!stopped) setTimeout(() => void startListening(), RELISTEN_MS);
      };
      l.on('error', lost);
      l.on('end', () => lost());
      await l.query('LISTEN events');
      listener = l;
      deps.log.info('webhook.listening');
      // What committed before the LISTEN took effect is found by this pass.
      wake();
    } catch (err) {
      deps.log.warn({ err }, 'webhook.listen_failed');
      if (!stopped) setTimeout(() => void startListening(), RELISTEN_MS);
    }
  }

  return {
    async start(): Promise<void> {
      poll = setInterval(wake, POLL_MS);
      await startListening();
      wake();
    },
    /** Stops waking, lets the running pass and sends finish, closes the listener. */
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(poll);
      clearTimeout(soon);
      await passing;
      await pool.drain();
      const l = listener;
      listener = undefined;
      await l?.end().catch(() => undefined);
    },
  };
}
