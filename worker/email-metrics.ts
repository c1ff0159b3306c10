// The metrics rollup of the worker (shared/email-metrics/rollup.ts): the delivery events added to the counters GET
// /emails/metrics reads, every EVERY_MS, sooner while committed events wait behind a running transaction. Several
// workers may run it: the cursor row is taken with SKIP LOCKED, so one counts and the others find it busy.
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger.ts';
import { rollUpAll } from '../shared/email-metrics/rollup.ts';

/** How old the newest counted event may be, at most, when nothing holds the rollup back. */
export const EVERY_MS = 1000;
const SOON_MS = 50;

export function metricsRollup(deps: { db: Knex; log: Logger }) {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const run = async () => {
    let next = EVERY_MS;
    try {
      const r = await rollUpAll(deps.db);
      if (r.events) deps.log.debug({ events: r.events }, 'metrics.rolled_up');
      if (r.waiting || r.busy) next = SOON_MS;
    } catch (err) {
      deps.log.error({ err }, 'metrics.rollup_failed');
    }
    if (!stopped) timer = setTimeout(() => (running = run()), next);
  };

  return {
    start(): void {
      running = run();
    },
    /** Lets a running pass finish; no new one starts. */
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
