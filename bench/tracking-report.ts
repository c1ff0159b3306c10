// The tables and PASS/FAIL lines of the tracking suite (bench/tracking.ts).
import { fixed, renderTable } from './table.ts';
import type { AcceptResult } from './sending-ours.ts';
import type { CpuRun, HitRun } from './tracking-load.ts';
import { EVENTS, type QueryRun } from './tracking-metrics.ts';
import type { Stalls } from './tracking-stalls.ts';
import { GAP_MS, outsideGaps as outside, type Gap } from './stall-probe.ts';
import { percentile } from './paced.ts';

export interface SendRun {
  hits: boolean;
  sends: AcceptResult;
  load?: HitRun;
  stalls: Stalls;
  /** The machine's pauses during the round (bench/stall-probe.ts). */
  gaps: Gap[];
}

export interface TrackingResults {
  cpu: CpuRun[];
  alone: HitRun;
  recorded: number;
  cpuPerHit: { api: number; pg: number };
  sends: SendRun[];
  /** Whether the stall probe ran at real-time priority. */
  probeRealtime: boolean;
  queries: QueryRun[];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');

/** The rates the runs asked for (TrackingBenchOptions'). */
export interface Asked {
  hitRate: number;
  sendRate: number;
  queries: number;
}

export function report(o: Asked, r: TrackingResults): void {
  const { cpu, alone, recorded, cpuPerHit, sends, queries } = r;
  const off = cpu.filter((r) => !r.tracked).map((r) => r.cpuMs);
  const on = cpu.filter((r) => r.tracked).map((r) => r.cpuMs);
  console.log('');
  console.log("## Tracking: the mta's CPU per message (10 KB HTML, ten links, one recipient, DKIM RSA-2048)");
  console.log(
    renderTable(
      ['round', 'tracking', 'messages', 'seconds', 'mta CPU ms / message'],
      cpu.map((r, i) => [
        Math.floor(i / 2) + 1,
        r.tracked ? 'on' : 'off',
        r.messages,
        fixed(r.seconds, 1),
        fixed(r.cpuMs, 2),
      ]),
    ),
  );
  const added = median(on) - median(off);
  console.log(
    `${verdict(added < 2)} tracking adds ${fixed(added, 2)} ms of mta CPU per message (median ${fixed(median(on), 2)} vs ${fixed(median(off), 2)}; target < 2)`,
  );
  console.log('');
  console.log('## Tracking listener: pixels and links of real recipients');
  console.log(
    renderTable(
      [
        'asked /s',
        'answered /s',
        'requests',
        'p50 ms',
        'p99 ms',
        'max ms',
        'generator late p99 ms',
        'not 200/302',
        'recorded',
        'api µs/hit',
        'pg µs/hit',
      ],
      [
        [
          o.hitRate,
          fixed(alone.rate, 0),
          alone.requests,
          fixed(alone.p50, 1),
          fixed(alone.p99, 1),
          fixed(alone.max, 1),
          fixed(alone.lateP99, 1),
          alone.bad,
          recorded,
          fixed(cpuPerHit.api, 0),
          fixed(cpuPerHit.pg, 0),
        ],
      ],
    ),
  );
  console.log(
    `${verdict(alone.rate >= o.hitRate * 0.95 && alone.p99 < 20 && alone.bad === 0)} ${fixed(alone.rate, 0)} hits/s, p99 ${fixed(alone.p99, 1)} ms (target ${o.hitRate}/s, p99 < 20 ms); ${recorded} of ${alone.requests + alone.warmup} recorded (the warm-up's included)`,
  );
  console.log('');
  console.log(`## POST /emails at ${o.sendRate}/s (2 KB, open loop), without and beside ${o.hitRate} hits/s`);
  console.log(
    renderTable(
      ['hits', 'sent', 'ok', 'p50 ms', 'p99 ms', 'hits /s', 'hits p99 ms'],
      sends.map((s) => [
        s.hits ? 'beside' : 'without',
        s.sends.sent,
        s.sends.ok,
        fixed(s.sends.p50, 1),
        fixed(s.sends.p99, 1),
        s.load ? fixed(s.load.rate, 0) : '-',
        s.load ? fixed(s.load.p99, 1) : '-',
      ]),
    ),
  );
  sendsVerdicts(sends, r.probeRealtime);
  console.log('');
  console.log(
    `## GET /emails/metrics over 90 days, a team with the counters of ${EVENTS} events (${o.queries} requests each)`,
  );
  console.log(
    renderTable(
      ['query', 'rows', 'p50 ms', 'p99 ms', 'max ms'],
      queries.map((q) => [q.name, q.rows, fixed(q.p50, 1), fixed(q.p99, 1), fixed(q.max, 1)]),
    ),
  );
  // The target is the query: 90 days, every count, as totals and by day (the first two shapes); the others
  // are there to show what a wider answer costs (2,177 hourly rows are ~0.9 MB of JSON).
  const target = Math.max(...queries.slice(0, 2).map((q) => q.p99));
  console.log(
    `${verdict(target < 200)} 90 days, totals and daily periods: p99 ${fixed(target, 1)} ms (target < 200 ms); the slowest shape's p99 ${fixed(Math.max(...queries.map((q) => q.p99)), 1)} ms`,
  );
}

/** What the api and PostgreSQL did during each POST /emails round (bench/tracking-stalls.ts). */
function stallsTable(sends: SendRun[]): void {
  console.log('');
  console.log("What the api and PostgreSQL did during each round (the api's metrics; pg_stat_activity every 10 ms):");
  const gc = (s: Stalls, kind: string) => (s.gc[kind] ? `${s.gc[kind].count} / ${fixed(s.gc[kind].ms, 0)}` : '-');
  console.log(
    renderTable(
      [
        'hits',
        'loop delay p99 / max ms',
        'scavenges (n / ms)',
        'mark-sweeps (n / ms)',
        'WAL MB / flushes / full-page images / checkpoints',
        'PostgreSQL active, by wait',
      ],
      sends.map(({ hits, stalls: s }) => [
        hits ? 'beside' : 'without',
        `${fixed(s.loopP99Ms, 0)} / ${fixed(s.loopMaxMs, 0)}`,
        gc(s, 'minor'),
        gc(s, 'major'),
        `${fixed(s.wal.mb, 0)} / ${s.wal.syncs} / ${s.wal.fpi} / ${s.wal.checkpoints}`,
        s.waits.map((w) => `${w.wait} ${fixed(w.share, 2)}`).join(', ') || 'idle',
      ]),
    ),
  );
}

const outsideGaps = (s: SendRun) => outside(s.sends, s.gaps);

/** Each round's machine pauses (bench/stall-probe.ts), the client's own lateness, and the p99 without the pauses. */
function gapsTable(sends: SendRun[], realtime: boolean) {
  console.log(
    `The machine's pauses: a probe at ${realtime ? 'real-time' : 'normal (no permission for real-time)'} priority woken every ms, ` +
      `each wake-up over ${GAP_MS} ms late; the sends a pause overlapped, and the p99 of the others:`,
  );
  console.log(
    renderTable(
      ['hits', 'pauses', 'longest ms', 'client late p99 / max ms', 'sends in a pause', 'p99 ms', 'p99 outside ms'],
      sends.map((s) => {
        const out = outsideGaps(s);
        const late = s.sends.late ?? [];
        return [
          s.hits ? 'beside' : 'without',
          s.gaps.length,
          s.gaps.length ? fixed(Math.max(...s.gaps.map((g) => g.ms)), 0) : '-',
          `${fixed(percentile(late, 99), 1)} / ${fixed(late[late.length - 1] ?? NaN, 1)}`,
          out.excluded,
          fixed(s.sends.p99, 1),
          fixed(out.p99, 1),
        ];
      }),
    ),
  );
}

/** The sends' verdict as the target states it, and the same without the sends a pause of the machine overlapped. */
function sendsVerdicts(sends: SendRun[], realtime: boolean) {
  stallsTable(sends);
  gapsTable(sends, realtime);
  const p99Without = median(sends.filter((s) => !s.hits).map((s) => s.sends.p99));
  const p99With = median(sends.filter((s) => s.hits).map((s) => s.sends.p99));
  console.log(
    `${verdict(p99With <= p99Without * 1.2)} POST /emails p99 ${fixed(p99With, 1)} ms beside hits vs ${fixed(p99Without, 1)} ms without (${fixed((p99With / p99Without - 1) * 100, 0)} %; target at most +20 %)`,
  );
  const outWithout = median(sends.filter((s) => !s.hits).map((s) => outsideGaps(s).p99));
  const outWith = median(sends.filter((s) => s.hits).map((s) => outsideGaps(s).p99));
  console.log(
    `${verdict(outWith <= outWithout * 1.2)} the same outside the machine's pauses: p99 ${fixed(outWith, 1)} ms beside hits vs ${fixed(outWithout, 1)} ms without (${fixed((outWith / outWithout - 1) * 100, 0)} %; what the hits themselves add)`,
  );
}
