// The mta's metrics: deliveries by outcome, DKIM signing time, outbound connections, SMTP submission (its sessions
// and the emails it accepts). The queue gauges are queues.ts's.
import { Counter, Histogram, Registry } from 'prom-client';
import { emailsAcceptedCounter } from './sends.ts';
import { zeroed } from './registry.ts';
import { sessionMetrics } from './sessions.ts';

export function mtaMetrics(registry: Registry = new Registry()) {
  return {
    deliveries: zeroed(
      new Counter({
        name: 'postwerk_deliveries_total',
        help: 'Recipient outcomes recorded by the mta: delivered, deferred, bounced, suppressed or failed (one per recipient and attempt; a deferred recipient counts again at its next attempt)',
        labelNames: ['outcome'] as const,
        registers: [registry],
      }),
      'outcome',
      ['delivered', 'deferred', 'bounced', 'suppressed', 'failed'],
    ),
    dkimSigning: new Histogram({
      name: 'postwerk_dkim_signing_duration_seconds',
      help: 'Time to DKIM-sign one message for one SMTP transaction (every signature it gets), thread pool wait included',
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
    deliveryConnections: zeroed(
      new Counter({
        name: 'postwerk_smtp_delivery_connections_total',
        help: 'SMTP sessions the mta took to deliver to an MX address: opened, reused (kept open from an earlier transaction) or failed (no session: refused, timed out, a bad greeting)',
        labelNames: ['result'] as const,
        registers: [registry],
      }),
      'result',
      ['opened', 'reused', 'failed'],
    ),
    submissionSessions: sessionMetrics(registry, 'postwerk_smtp_submission_sessions', 'SMTP submission', ['listener']),
    emailsAccepted: emailsAcceptedCounter(registry, 'smtp'),
  };
}

export type MtaMetrics = ReturnType<typeof mtaMetrics>;
