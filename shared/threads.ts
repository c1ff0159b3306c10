// A worker thread running one of the project's own files, in the layout that runs (shared/layout.ts): the build's
// .js as it is, or the TypeScript source with tsx registered in the thread first (a worker thread starts without the
// parent's loader hooks).
import { readlinkSync } from 'node:fs';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { compiled } from './layout.ts';

/** `source` names the thread's file by its source, `new URL('./x.ts', import.meta.url)`; the build runs x.js beside. */
export function startThread(source: URL, options: Omit<WorkerOptions, 'eval'> = {}): Worker {
  if (compiled) return new Worker(new URL(source.href.replace(/\.ts$/, '.js')), options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(source.href)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/** The calling thread's id in the kernel (its /proc/<pid>/task/<tid>), or null where there is no /proc. */
export function kernelThreadId(): number | null {
  try {
    return Number(readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return null;
  }
}
