// What a listener thread (thread.ts) and the thread that started it (start.ts) say to each other.

/** One call on a metric of the starting thread's registry: its name there, the method, the arguments. */
export type MetricCall = [name: string, method: 'inc' | 'dec' | 'set', args: unknown[]];

export type FromThread =
  | { kind: 'tid'; tid: number | null }
  | { kind: 'metrics'; calls: MetricCall[] }
  | { kind: 'listening'; detail?: unknown }
  | { kind: 'failed'; reason: string; startup: boolean }
  | { kind: 'closed' };

export type ToThread = { kind: 'listen' } | { kind: 'close' };
