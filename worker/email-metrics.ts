// The metrics rollup of the worker (shared/email-metrics/rollup.ts): the delivery events added to the counters GET
// /emails/metrics reads, every EVERY_MS, sooner while committed events wait behind a running transaction. Several
// workers may run it: the cursor row is taken with SKIP LOCKED, so one counts and the others find it busy.
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger.ts';
import { rollUpAll } from '../shared/email-metrics/rollup.ts';
import { ticker } from '../shared/ticker.ts';

/** How old the newest counted event may be, at most, when nothing holds the rollup back. */
export const EVERY_MS = 1000;
const SOON_MS = 50;

export function metricsRollup(deps: { db: Knex; log: Logger }) {
  return ticker({
    name: 'metrics-rollup',
    everyMs: EVERY_MS,
    log: deps.log,
    async run() {
      const r = await rollUpAll(deps.db);
      if (r.events) deps.log.debug({ events: r.events }, 'metrics.rolled_up');
      if (r.waiting || r.busy) return { againInMs: SOON_MS };
    },
  });
}
