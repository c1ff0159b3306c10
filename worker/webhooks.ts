// The webhooks job of the worker: fan events out to endpoints, then send what is due. It runs in the worker
// process itself, not from a queue: a look every LOOK_MS (one index probe: an event past the fan-out cursor whose
// transaction has ended) starts a pass within milliseconds of a commit, a pass that fanned events out looks again at
// once (under load the passes follow each other), and a pass every POLL_MS finds retries come due. Passes run one at
// a time; a wake during a pass runs one more. The sends run in a pool the pass does not wait for, so a slow endpoint
// holds only its own slot.
//
// No NOTIFY wakes it: a NOTIFY in the transaction that writes an event takes PostgreSQL's cluster-wide notify lock
// at commit and holds it through the commit's WAL flush, so every event-writing commit of every process waited on
// the one before (bench/README.md, the tracking stalls). The look costs the writers nothing.
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger.ts';
import type { AddressResolver } from '../shared/dns/server-address.ts';
import { eventsDue, fanOutAll } from '../shared/webhooks/fanout.ts';
import { deliveryPool, type Sent } from '../shared/webhooks/deliver.ts';
import { createAgents } from '../shared/webhooks/target.ts';
import { reportWebhookAttempts } from '../shared/webhooks/report.ts';
import type { WorkerMetrics } from '../shared/metrics/worker.ts';

/** Retries come due on the clock: this is how late one may start. */
export const POLL_MS = 500;
/** How late a pass may start after the commit of an event, the worker idle (a look is a prepared index probe). */
export const LOOK_MS = 20;
/** Endpoints one worker process sends to at once. */
export const ENDPOINTS_IN_FLIGHT = 50;

export interface WebhookJobDeps {
  db: Knex;
  secrets: Buffer;
  resolver: AddressResolver;
  allowPrivate: boolean;
  log: Logger;
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
  let looking: Promise<void> | undefined;
  let poll: NodeJS.Timeout | undefined;
  let look: NodeJS.Timeout | undefined;

  /** The events it fanned out. */
  async function pass(): Promise<number> {
    const t0 = Date.now();
    const fanned = await fanOutAll(deps.db);
    await pool.tick();
    if (fanned.events) deps.log.debug({ ms: Date.now() - t0, ...fanned }, 'webhook.pass');
    return fanned.events;
  }

  /** A pass if an event waits. Not while a pass runs: the look after it sees what that pass left. */
  function lookForEvents(): void {
    if (stopped || passing || looking) return;
    looking = eventsDue(deps.db)
      .then((due) => (due ? wake() : undefined))
      .catch((err) => deps.log.warn({ err }, 'webhook.look_failed'))
      .finally(() => (looking = undefined));
  }

  function wake(): void {
    if (stopped) return;
    if (passing) {
      again = true;
      return;
    }
    passing = (async () => {
      let fanned = 0;
      do {
        again = false;
        fanned = await pass().catch((err) => (deps.log.error({ err }, 'webhook.pass_failed'), 0));
      } while (again && !stopped);
      passing = undefined;
      // More may have committed while it ran.
      if (fanned) lookForEvents();
    })();
  }

  return {
    async start(): Promise<void> {
      poll = setInterval(wake, POLL_MS);
      look = setInterval(lookForEvents, LOOK_MS);
      wake();
    },
    /** Stops waking, lets the running look, pass and sends finish. */
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(poll);
      clearInterval(look);
      await looking;
      await passing;
      await pool.drain();
    },
  };
}
