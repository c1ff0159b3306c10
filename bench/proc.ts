// Memory and CPU of a server process, read from the outside through Linux's /proc, so the servers carry no
// measuring code of their own and both are measured the same way. Elsewhere every figure is `undefined`
// and the table prints "-".
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

/** Clock ticks per second for /proc/<pid>/stat's utime and stime (100 on every common Linux build). */
const ticksPerSecond = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system, all threads) the process has used so far. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    // The command name in field 2 may hold spaces; fields after its closing parenthesis are plain.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the line, i.e. 11 and 12 after "pid (comm)".
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    return undefined;
  }
}

/** CPU seconds the whole machine has been busy (all cores; time stolen by a hypervisor counts as busy). */
function machineBusySeconds(): number | undefined {
  try {
    const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already inside user and nice).
    const busy = ticks.slice(0, 8).reduce((a, b) => a + b, 0) - ticks[3] - ticks[4];
    return busy / ticksPerSecond;
  } catch {
    return undefined;
  }
}

/** CPU seconds of a process, 0 once it is gone. */
export function cpuOf(pid: number): number {
  return cpuSeconds(pid) ?? 0;
}

/**
 * CPU seconds of every process whose command name matches `comm` and, with `cmdline`, whose command line holds it
 * (a PostgreSQL backend's names its database: other sessions' databases on the same server are not counted).
 */
export function cpuOfAll(comm: RegExp, cmdline?: string): number {
  let total = 0;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (!comm.test(name)) continue;
      if (cmdline && !readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(cmdline)) continue;
      total += cpuOf(Number(d));
    } catch {
      /* gone */
    }
  }
  return total;
}

export interface WindowStats {
  peakRssMb?: number;
  /** CPU use of the process, in % of one core. */
  cpuPercent?: number;
  /** CPU use of the whole machine (every process, PostgreSQL and other users included), in % of one core. */
  machineCpuPercent?: number;
}

export interface Window {
  end(): WindowStats;
}

function percent(start: number | undefined, end: number | undefined, wallSeconds: number): number | undefined {
  return start === undefined || end === undefined ? undefined : ((end - start) / wallSeconds) * 100;
}

/**
 * Starts measuring `pid`. The kernel's peak-RSS mark (VmHWM) is reset to the current RSS by writing 5 to
 * clear_refs, so the peak is exact and belongs to this window only; if that write is refused, RSS is sampled
 * every 50 ms instead (which can miss a short spike).
 */
export function startWindow(pid: number): Window {
  let hwmReset = true;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    hwmReset = false;
  }
  let sampledKb = statusKb(pid, 'VmRSS');
  const sampler = hwmReset
    ? undefined
    : setInterval(() => {
        const kb = statusKb(pid, 'VmRSS');
        if (kb !== undefined) sampledKb = Math.max(sampledKb ?? 0, kb);
      }, 50);
  const cpuStart = cpuSeconds(pid);
  const machineStart = machineBusySeconds();
  const wallStart = performance.now();
  return {
    end() {
      if (sampler) clearInterval(sampler);
      const cpuEnd = cpuSeconds(pid);
      const machineEnd = machineBusySeconds();
      const wall = (performance.now() - wallStart) / 1000;
      const peakKb = hwmReset ? statusKb(pid, 'VmHWM') : sampledKb;
      return {
        peakRssMb: peakKb === undefined ? undefined : peakKb / 1024,
        cpuPercent: percent(cpuStart, cpuEnd, wall),
        machineCpuPercent: percent(machineStart, machineEnd, wall),
      };
    },
  };
}

/** Context switches (voluntary + involuntary) of every thread of a process: how often it slept and woke. */
export function switchesOf(pid: number): number {
  let total = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      for (const m of status.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)$/gm)) total += Number(m[1]);
    }
  } catch {
    /* gone */
  }
  return total;
}

export interface RssByQuarter {
  /** VmRSS when the work started, MB. */
  startMb: number;
  /** The highest VmRSS sampled in each quarter of the work (MB, 0 where none was): a growth, a plateau or a leak. */
  quartersMb: number[];
}

/**
 * VmRSS of `pid` sampled every `everyMs` while a piece of work runs, filed by `progress()` (0 to 1): a process whose
 * memory grows with the work is at its highest in the last quarter, above its first half; a flat one is not.
 */
export function trackRssByQuarter(pid: number, progress: () => number, everyMs = 200): { stop(): RssByQuarter } {
  const mb = () => (statusKb(pid, 'VmRSS') ?? Number.NaN) / 1024;
  const result = { startMb: mb(), quartersMb: [0, 0, 0, 0] };
  const sample = () => {
    const now = mb();
    const q = Math.min(3, Math.max(0, Math.floor(progress() * 4)));
    result.quartersMb[q] = Math.max(result.quartersMb[q], now);
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return result;
    },
  };
}

/** Read and write syscalls the process has made so far (/proc/<pid>/io: syscr, syscw), every thread. */
export function syscallsOf(pid: number): { reads: number; writes: number } {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)$`, 'm').exec(io)?.[1] ?? Number.NaN);
    return { reads: field('syscr'), writes: field('syscw') };
  } catch {
    return { reads: Number.NaN, writes: Number.NaN };
  }
}
