// The worker's metrics: webhook deliveries by result and their lag, scheduled emails released. The queue gauges are
// queues.ts's.
import { Counter, Histogram, Registry } from 'prom-client';
import { zeroed } from './registry.ts';

export function workerMetrics(registry: Registry = new Registry()) {
  return {
    webhookDeliveries: zeroed(
      new Counter({
        name: 'postwerk_webhook_deliveries_total',
        help: 'Webhook delivery attempts, by result: success (2xx), retry (failed, tried again on the schedule), failed (the last attempt failed: parked)',
        labelNames: ['result'] as const,
        registers: [registry],
      }),
      'result',
      ['success', 'retry', 'failed'],
    ),
    webhookLag: new Histogram({
      name: 'postwerk_webhook_lag_seconds',
      help: "Time from an event's creation to its successful delivery to an endpoint (retries included)",
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400],
      registers: [registry],
    }),
    scheduledReleased: new Counter({
      name: 'postwerk_scheduled_emails_released_total',
      help: 'Scheduled emails released to delivery once their time came',
      registers: [registry],
    }),
  };
}

export type WorkerMetrics = ReturnType<typeof workerMetrics>;
