// SMTP sessions of a listener, counted at the TCP level (the server's 'connection' and its count of connections), so
// a connection cut before its greeting (an early talker, a failed TLS handshake) is counted and let go like any other.
import type { Server } from 'node:net';
import { Counter, Gauge, type Registry } from 'prom-client';

export function sessionMetrics<L extends string>(registry: Registry, prefix: string, what: string, labelNames: L[]) {
  return {
    open: new Gauge({ name: `${prefix}_open`, help: `${what} sessions open now`, labelNames, registers: [registry] }),
    total: new Counter({ name: `${prefix}_total`, help: `${what} sessions opened`, labelNames, registers: [registry] }),
  };
}

/** What counting needs of the two: a thread relaying to its process's metrics is one too. */
export interface SessionMetrics<L extends string> {
  open: Pick<Gauge<L>, 'inc' | 'dec' | 'set'>;
  total: Pick<Counter<L>, 'inc'>;
}

/** How often the open gauge is read from the listener's own count (besides at each new connection). */
export const OPEN_SESSIONS_EVERY_MS = 1000;

export function countSessions<L extends string>(
  server: Server,
  metrics: SessionMetrics<L>,
  labels: Partial<Record<L, string>> = {},
): void {
  // The listener's series exist from the start, at 0.
  metrics.total.inc(labels, 0);
  metrics.open.set(labels, 0);
  // Open sessions are the server's own count of its connections: a socket smtp-server upgrades to TLS (STARTTLS,
  // implicit TLS) never emits its own 'close' (the TLS socket that took its handle does), so counting closes on the
  // accepted socket left the gauge rising forever.
  const read = () => server.getConnections((err, n) => void (err || metrics.open.set(labels, n)));
  const timer = setInterval(read, OPEN_SESSIONS_EVERY_MS).unref();
  server.once('close', () => clearInterval(timer));
  server.on('connection', () => {
    metrics.total.inc(labels);
    read();
  });
}
