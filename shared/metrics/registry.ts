// One registry per process, made by its wiring file and handed down with the metric objects: prom-client's default
// registry is a module-wide singleton, and tests build many apps and pipelines in one process.
import { collectDefaultMetrics, Registry, type Counter } from 'prom-client';

/** A process's registry with Node's own metrics (process_*, nodejs_*: CPU, memory, event loop lag, GC, handles). */
export function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Upper bounds (seconds) of the latency histograms: an accept takes milliseconds, a slow peer seconds. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Starts each known series of `counter` at 0 (Prometheus' advice: a series that appears late hides its first rise). */
export function zeroed<L extends string>(counter: Counter<L>, label: L, values: readonly string[]): Counter<L> {
  for (const value of values) counter.inc({ [label]: value } as Partial<Record<L, string>>, 0);
  return counter;
}
