// The worker's work on a clock (shared/ticker.ts), each in every worker copy (safe side by side: SKIP LOCKED,
// leases, conditional updates): scheduled emails released, domains and claims checked, exports built, the metrics
// rollup. The broadcasts' sweep ticks in ./broadcasts.ts.
import type { Knex } from 'knex';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import type { BlobStore } from '../shared/blobs.ts';
import type { DnsResolver } from '../shared/dns/resolver.ts';
import type { EnqueueDelivery } from '../shared/emails/enqueue.ts';
import type { WorkerMetrics } from '../shared/metrics/worker.ts';
import { ticker } from '../shared/ticker.ts';
import { retireSchedules } from '../shared/queue.ts';
import { buildPendingExports } from '../shared/teams/export.ts';
import { sweepClaims, sweepDomains, SWEEP_EVERY_MS } from './domains.ts';
import { RELEASE_EVERY_MS, releaseScheduled } from './sending.ts';
import { metricsRollup } from './email-metrics.ts';

/** Exports asked for are built within two seconds (shared/teams/export.ts; the rows say what is pending). */
const EXPORTS_EVERY_MS = 2000;

export interface TickerDeps {
  config: Config;
  db: Knex;
  blobs: BlobStore;
  dns: DnsResolver;
  secrets: Buffer;
  log: Logger;
  metrics: WorkerMetrics;
  enqueueDelivery: EnqueueDelivery;
}

export async function startWorkerTickers(deps: TickerDeps) {
  const { config, db, dns, log } = deps;
  // Earlier versions ran these as BullMQ job schedulers (the webhooks' as a tick too): no worker takes them now.
  await retireSchedules(config, [['domains', 'sweep']], ['sending', 'teams', 'webhooks']);
  const tickers = [
    // Scheduled emails go out within a second of their time: a run every half second leaves the other half for the
    // run itself (a partial index finds the due ones).
    ticker({
      name: 'release',
      everyMs: RELEASE_EVERY_MS,
      log,
      run: async () => {
        const report = { log, released: deps.metrics.scheduledReleased };
        await releaseScheduled(db, deps.enqueueDelivery, new Date(), undefined, report);
      },
    }),
    ticker({
      name: 'domains',
      everyMs: SWEEP_EVERY_MS,
      log,
      run: async () => {
        await sweepDomains(db, dns, config, log);
        await sweepClaims(db, { resolver: dns, hosts: config, secrets: deps.secrets }, log);
      },
    }),
    ticker({
      name: 'exports',
      everyMs: EXPORTS_EVERY_MS,
      log,
      run: async () => {
        await buildPendingExports({ db, blobs: deps.blobs, config, log });
      },
    }),
    // The counters of GET /emails/metrics, from the events, a second behind at most (docs/metrics.md).
    metricsRollup({ db, log }),
  ];
  for (const t of tickers) t.start();
  return { stop: () => Promise.all(tickers.map((t) => t.stop())) };
}
