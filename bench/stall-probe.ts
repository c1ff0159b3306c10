// The machine's own pauses, seen from outside our processes: a small process at real-time priority (`chrt -f 50`,
// above everything the bench and the platform run) wakes every millisecond and reports each wake-up that came more
// than GAP_MS late. At that priority nothing of ours can hold it off a core, so a gap is the VM itself not running
// (the hypervisor's steal, which this VM's /proc/stat does not report) or the kernel busy. The tracking suite
// (bench/tracking.ts part 3) and the broadcasts suite report each paced round with and without the requests such a
// gap overlapped, so the platform's share of the tail shows through the machine's. Without permission for real-time
// priority it runs at the normal priority and says so (its gaps then include our own load).
import { spawn, spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { percentile } from './paced.ts';

export const GAP_MS = 15;

/** A pause of the machine: from `at` (the bench's performance.now() clock) for `ms`. */
export interface Gap {
  at: number;
  ms: number;
}

export interface StallProbe {
  /** Whether it runs at real-time priority. */
  realtime: boolean;
  /** Stops the probe: every gap it saw. */
  stop(): Promise<Gap[]>;
}

// Epoch milliseconds of each late wake-up, so the bench can put it on its own clock.
const CHILD = `
const { performance } = require('node:perf_hooks');
let last = performance.now();
setInterval(() => {
  const now = performance.now();
  if (now - last > ${GAP_MS}) process.stdout.write(JSON.stringify({ at: performance.timeOrigin + last, ms: now - last }) + '\\n');
  last = now;
}, 1);
`;

export function startStallProbe(): StallProbe {
  const realtime = spawnSync('chrt', ['-f', '50', 'true']).status === 0;
  const args = ['-e', CHILD];
  const child = realtime
    ? spawn('chrt', ['-f', '50', process.execPath, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
    : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  const exited = new Promise((r) => child.once('exit', r));
  return {
    realtime,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      return out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { at: number; ms: number })
        .map((g) => ({ at: g.at - performance.timeOrigin, ms: g.ms }));
    },
  };
}

/** Whether the span [from, from + ms] overlaps a gap. */
export const overlapsGap = (gaps: Gap[], from: number, ms: number) =>
  gaps.some((g) => g.at < from + ms && from < g.at + g.ms);

/** The gaps that fall within a paced run (its first request's due time to its end). */
export const gapsDuring = (gaps: Gap[], run: { startedAt: number; wallMs: number }) =>
  gaps.filter((g) => g.at + g.ms > run.startedAt && g.at < run.startedAt + run.wallMs);

/** A paced run's answered requests that no gap overlapped: how many were left out, and the p99 of the rest. */
export function outsideGaps(run: { spans?: { due: number; ms: number }[] }, gaps: Gap[]) {
  const spans = run.spans ?? [];
  const kept = spans.filter((x) => !overlapsGap(gaps, x.due, x.ms)).map((x) => x.ms);
  kept.sort((a, b) => a - b);
  return { excluded: spans.length - kept.length, p99: percentile(kept, 99) };
}
