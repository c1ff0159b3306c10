// The thread's side of a listener thread (start.ts starts it): says its kernel thread id first, relays its metric
// calls to the starting thread in batches (one message per 100 ms, however many hits), listens and closes when told.
import { parentPort } from 'node:worker_threads';
import { StartupError } from '../startup.ts';
import { kernelThreadId } from '../threads.ts';
import type { FromThread, MetricCall, ToThread } from './protocol.ts';

/** How long metric calls wait to go to the starting thread together. */
const RELAY_EVERY_MS = 100;

const port = parentPort;
const post = (m: FromThread) => port?.postMessage(m);
// First, before the thread's own modules run: the starting thread may be waiting for it to set priorities.
post({ kind: 'tid', tid: kernelThreadId() });

// Gauges' calls in order; counters' increments summed per series (a hit each would be a call each).
let calls: MetricCall[] = [];
const sums = new Map<string, { name: string; labels: object | undefined; value: number }>();
const flush = () => {
  for (const { name, labels, value } of sums.values())
    calls.unshift([name, 'inc', labels === undefined ? [value] : [labels, value]]);
  sums.clear();
  if (!calls.length) return;
  post({ kind: 'metrics', calls });
  calls = [];
};
const timer = setInterval(flush, RELAY_EVERY_MS).unref();

/** A counter of the starting thread's registry, by its name there: its increments reach it within 100 ms. */
export function relayedCounter(name: string) {
  return {
    inc(labels?: object | number, value?: number) {
      const [series, by] = typeof labels === 'object' ? [labels, value ?? 1] : [undefined, labels ?? 1];
      const key = `${name} ${JSON.stringify(series ?? null)}`;
      const sum = sums.get(key);
      if (sum) sum.value += by;
      else sums.set(key, { name, labels: series, value: by });
    },
  };
}

/** A gauge of the starting thread's registry, by its name there: its calls reach it in order within 100 ms. */
export function relayedGauge(name: string) {
  const call =
    (method: MetricCall[1]) =>
    (...args: unknown[]) =>
      void calls.push([name, method, args]);
  return { inc: call('inc'), dec: call('dec'), set: call('set') };
}

/** Serves `listeners` as the starting thread asks: listen, then close (and the thread ends). */
export function serveListeners(
  listeners: { listen(): Promise<unknown>; close(): Promise<void> },
  log: { error: (o: object, m: string) => void },
): void {
  if (!port) throw new Error('a listener thread runs as a worker thread only');
  port.on('message', (m: ToThread) => {
    if (m.kind === 'listen')
      listeners.listen().then(
        (detail) => post({ kind: 'listening', detail }),
        (err: Error) => post({ kind: 'failed', reason: err.message, startup: err instanceof StartupError }),
      );
    else if (m.kind === 'close')
      void listeners
        .close()
        .catch((err: unknown) => log.error({ err }, 'listener_thread.close_failed'))
        .then(() => {
          clearInterval(timer);
          flush();
          post({ kind: 'closed' });
          port.close();
        });
  });
}
