// The inbound's MX thread (thread.ts), started from the main thread: its metrics are the inbound's own.
import type { Config } from '../../shared/config.ts';
import type { Logger } from '../../shared/logger.ts';
import type { InboundMetrics } from '../../shared/metrics/inbound.ts';
import { startListenerThread, type ListenerThread } from '../../shared/listener-thread/start.ts';

export function startMxThread(o: {
  config: Config;
  tls: { key: string; cert: string };
  metrics: InboundMetrics;
  log: Logger;
}): ListenerThread {
  return startListenerThread({
    source: new URL('./thread.ts', import.meta.url),
    workerData: { config: o.config, tls: { key: o.tls.key, cert: o.tls.cert } },
    targets: {
      'sessions.open': o.metrics.mxSessions.open,
      'sessions.total': o.metrics.mxSessions.total,
      recipients: o.metrics.mxRecipients,
      messages: o.metrics.mxMessages,
    },
    log: o.log,
    name: 'mx',
  });
}
