// SMTP sessions of a listener, counted at the TCP level (the server's 'connection' and the socket's 'close'), so a
// connection cut before its greeting (an early talker, a failed TLS handshake) is counted and let go like any other.
import type { Server } from 'node:net';
import { Counter, Gauge, type Registry } from 'prom-client';

export function sessionMetrics<L extends string>(registry: Registry, prefix: string, what: string, labelNames: L[]) {
  return {
    open: new Gauge({ name: `${prefix}_open`, help: `${what} sessions open now`, labelNames, registers: [registry] }),
    total: new Counter({ name: `${prefix}_total`, help: `${what} sessions opened`, labelNames, registers: [registry] }),
  };
}

export type SessionMetrics<L extends string> = ReturnType<typeof sessionMetrics<L>>;

export function countSessions<L extends string>(
  server: Server,
  metrics: SessionMetrics<L>,
  labels: Partial<Record<L, string>> = {},
): void {
  // The listener's series exist from the start, at 0.
  metrics.total.inc(labels, 0);
  metrics.open.set(labels, 0);
  server.on('connection', (socket) => {
    metrics.total.inc(labels);
    metrics.open.inc(labels);
    socket.once('close', () => metrics.open.dec(labels));
  });
}
