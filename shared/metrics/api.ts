// The api's metrics. `route` is the operation's declared path (`/emails/{email_id}`), never the URL, so the label
// has as many values as there are operations (plus `unmatched` for a path no operation serves).
import { Counter, Histogram, Registry } from 'prom-client';
import { LATENCY_BUCKETS } from './registry.ts';
import { emailsAcceptedCounter } from './sends.ts';

export function apiMetrics(registry: Registry = new Registry()) {
  return {
    httpRequests: new Counter({
      name: 'postwerk_http_requests_total',
      help: 'HTTP requests answered by the api, by method, declared route and status',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'postwerk_http_request_duration_seconds',
      help: 'Time from a request reaching the api to its answer, by method and declared route',
      labelNames: ['method', 'route'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    emailsAccepted: emailsAcceptedCounter(registry, 'api'),
  };
}

export type ApiMetrics = ReturnType<typeof apiMetrics>;
