// The inbound's metrics: MX sessions, recipients and messages by the answer they got, receive jobs by result and
// duration. The queue gauges are queues.ts's.
import { Counter, Histogram, Registry } from 'prom-client';
import { sessionMetrics } from './sessions.ts';
import { zeroed } from './registry.ts';
import type { JobMetrics } from './jobs.ts';

/** What an MX answer did: 2xx accepted, 5xx refused, 4xx deferred (the sender tries again later). */
const MX_RESULTS = ['accepted', 'refused', 'deferred'] as const;
export type MxResult = (typeof MX_RESULTS)[number];

export const mxResult = (code: number | undefined): MxResult =>
  code !== undefined && code >= 500 ? 'refused' : code !== undefined && code >= 400 ? 'deferred' : 'accepted';

export function inboundMetrics(registry: Registry = new Registry()) {
  const receive: JobMetrics = {
    jobs: zeroed(
      new Counter({
        name: 'postwerk_receive_jobs_total',
        help: 'Receive jobs run, by result: processed (stored as received, dropped with a reason, or read as a bounce or complaint), skipped (nothing to do: done already), failed (retried)',
        labelNames: ['result'],
        registers: [registry],
      }),
      'result',
      ['processed', 'skipped', 'failed'],
    ),
    duration: new Histogram({
      name: 'postwerk_receive_job_duration_seconds',
      help: 'Time one receive job took (scan, parse, authenticate, store), by result',
      labelNames: ['result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
  };
  return {
    mxSessions: sessionMetrics(registry, 'postwerk_mx_sessions', 'MX', []),
    mxRecipients: zeroed(
      new Counter({
        name: 'postwerk_mx_recipients_total',
        help: 'RCPT TO at the MX, by answer: accepted, refused (550: no such mailbox here), deferred (451: the lookup failed)',
        labelNames: ['result'] as const,
        registers: [registry],
      }),
      'result',
      MX_RESULTS,
    ),
    mxMessages: zeroed(
      new Counter({
        name: 'postwerk_mx_messages_total',
        help: 'Messages at the MX after DATA, by answer: accepted (250, stored), refused (5xx: too large), deferred (4xx: not stored, the sender retries)',
        labelNames: ['result'] as const,
        registers: [registry],
      }),
      'result',
      MX_RESULTS,
    ),
    receive,
  };
}

export type InboundMetrics = ReturnType<typeof inboundMetrics>;
