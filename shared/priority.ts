// A background process gives way to the interactive ones on a busy machine: the mta (delivery, which can wait a
// moment) lowers its CPU priority so that the api, answering a customer, comes first when both want the cores.
// On Linux a nice value belongs to each thread, not to the process: every thread that exists now is lowered (the
// main thread, libuv's pool, V8's helpers), and the threads made later inherit it from the one that makes them.
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';
import type { Logger } from './logger.ts';

/**
 * Lowers this process's threads to `nice` (0-19; 0 leaves them alone), but those named in `except` (kernel thread
 * ids: a thread that must keep the process's priority, made before this call). Raising priority is not attempted.
 */
export function lowerPriority(nice: number, log?: Logger, except: (number | null)[] = []): void {
  if (nice <= 0) return;
  let threads: number[];
  try {
    threads = readdirSync('/proc/self/task').map(Number);
  } catch {
    threads = [0]; // not Linux: the whole process where the platform has one priority, this thread where not
  }
  for (const tid of threads) {
    if (except.includes(tid)) continue;
    try {
      setPriority(tid, nice);
    } catch (err) {
      // A thread that ended meanwhile; or a limit (RLIMIT_NICE) the operator set: the process still runs.
      log?.warn({ err: (err as Error).message, tid, nice }, 'priority.not_lowered');
    }
  }
}
