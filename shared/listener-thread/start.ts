// Listeners in a worker thread of their own (thread.ts is the thread's side), so that their work does not queue on
// the event loop of the rest of the process and can run at another CPU priority than it (the mta's submission, the
// api's tracking hits). This side starts the thread, learns its kernel thread id, applies the metric calls it relays
// to this thread's metrics, asks it to listen and to close. The thread ending on its own ends the process: a process
// whose listeners silently stopped would be worse than one its supervisor restarts.
import type { Logger } from '../logger.ts';
import { StartupError } from '../startup.ts';
import { startThread } from '../threads.ts';
import type { FromThread, ToThread } from './protocol.ts';

/** The metrics the thread may call, by the names it uses: any object with the methods it calls. */
export type RelayTargets = Record<string, object>;

export interface ListenerThread {
  /**
   * The thread's id in the kernel (null without /proc), once the thread has loaded its modules: the starting thread
   * goes on with its own start meanwhile, and waits for it only where it needs it (the mta, to set priorities).
   */
  tid: Promise<number | null>;
  /**
   * Opens the thread's listeners and answers what their listen() answered there (a port); a port in use rejects with
   * a StartupError naming its variable.
   */
  listen(): Promise<unknown>;
  /** Stops taking connections, lets those in progress finish, and ends the thread. */
  close(): Promise<void>;
}

export function startListenerThread(o: {
  /** The thread's file by its source: `new URL('./thread.ts', import.meta.url)`. */
  source: URL;
  workerData: unknown;
  targets: RelayTargets;
  log: Logger;
  /** The log events' prefix: `submission` → submission.thread_exited. */
  name: string;
}): ListenerThread {
  const worker = startThread(o.source, { workerData: o.workerData });
  let closing = false;
  const waiting = new Map<string, (m: FromThread) => void>();
  const next = (kind: FromThread['kind']) => new Promise<FromThread>((resolve) => waiting.set(kind, resolve));
  worker.on('message', (m: FromThread) => {
    if (m.kind === 'metrics') {
      for (const [name, method, args] of m.calls) {
        const target = o.targets[name] as Record<string, ((...a: unknown[]) => void) | undefined> | undefined;
        target?.[method]?.(...args);
      }
      return;
    }
    const kind = m.kind === 'failed' ? 'listening' : m.kind;
    const resolve = waiting.get(kind);
    waiting.delete(kind);
    resolve?.(m);
  });
  worker.on('error', (err) => {
    o.log.fatal({ err }, `${o.name}.thread_failed`);
    process.exit(1);
  });
  worker.on('exit', (code) => {
    if (closing) return;
    o.log.fatal({ code }, `${o.name}.thread_exited`);
    process.exit(1);
  });
  return {
    tid: next('tid').then((m) => (m as Extract<FromThread, { kind: 'tid' }>).tid),
    async listen() {
      const answer = next('listening');
      worker.postMessage({ kind: 'listen' } satisfies ToThread);
      const m = await answer;
      if (m.kind === 'failed') throw m.startup ? new StartupError(m.reason) : new Error(m.reason);
      return m.kind === 'listening' ? m.detail : undefined;
    },
    async close() {
      closing = true;
      const exited = new Promise<null>((resolve) => worker.once('exit', () => resolve(null)));
      const closed = next('closed');
      worker.postMessage({ kind: 'close' } satisfies ToThread);
      // Once the thread says it closed (its listeners, its queue, its pool), it is ended rather than left to wind
      // down: sockets its clients leave closing would keep it (and the process's stop) for seconds.
      if (await Promise.race([closed, exited])) await worker.terminate();
    },
  };
}
