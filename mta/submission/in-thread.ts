// The mta's submission thread (thread.ts), started from the main thread: its metrics are the mta's own.
import type { Config } from '../../shared/config.ts';
import type { Logger } from '../../shared/logger.ts';
import type { MtaMetrics } from '../../shared/metrics/mta.ts';
import { startListenerThread, type ListenerThread } from '../../shared/listener-thread/start.ts';

export function startSubmissionThread(o: {
  config: Config;
  tls: { key: string; cert: string };
  metrics: MtaMetrics;
  log: Logger;
}): ListenerThread {
  return startListenerThread({
    source: new URL('./thread.ts', import.meta.url),
    workerData: { config: o.config, tls: { key: o.tls.key, cert: o.tls.cert } },
    targets: {
      emailsAccepted: o.metrics.emailsAccepted,
      'sessions.open': o.metrics.submissionSessions.open,
      'sessions.total': o.metrics.submissionSessions.total,
    },
    log: o.log,
    name: 'submission',
  });
}
