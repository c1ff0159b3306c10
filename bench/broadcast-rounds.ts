// The broadcasts suite's paced rounds of POST /emails (bench/broadcasts.ts): each round's requests as the client and
// the api timed them, what PostgreSQL and the api did meanwhile, and the table that prints them.
import type { Db } from '../shared/db/knex.ts';
import { apiPaced, type AcceptResult, type Ours } from './sending-ours.ts';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { percentile } from './paced.ts';
import { outsideGaps, type Gap } from './stall-probe.ts';
import { watchStalls, type Stalls } from './tracking-stalls.ts';
import { fixed, renderTable } from './table.ts';
import { cpuOf, cpuOfAll } from './proc.ts';
import type { Sink } from './sending-peers.ts';

/**
 * A paced round of POST /emails at 100/s for `seconds` (the api's, in `ours`), with what the api, PostgreSQL, the
 * processes (the api, the mta and `pids`) and the bench itself did meanwhile; pushed onto `rounds`.
 */
export async function pacedRound(
  ours: Ours,
  o: { database: string; metricsPort: number; seconds: number; pids: number[]; rounds: Round[]; sink: Sink },
  when: string,
): Promise<AcceptResult> {
  const pids = [ours.api.pid, ours.mta.pid, ...o.pids];
  const watched = await watchStalls(ours.db, o.database, `http://127.0.0.1:${o.metricsPort}/metrics`);
  const from = new Date();
  const cpuBefore = cpuReading(pids);
  const atSink = o.sink.count();
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const r = await apiPaced(ours, 100 * o.seconds, 100, 1024);
  loop.disable();
  const seconds = (Date.now() - from.getTime()) / 1000;
  const cpu = coresSince(cpuBefore, cpuReading(pids), seconds);
  // The sink's messages over the round but the round's own: the broadcast's (and the singles' tail, before it).
  const others = (o.sink.count() - atSink - r.ok) / seconds;
  const stalls = await watched();
  const to = new Date();
  const opened = await openedDuring(ours.db, o.database, from, to);
  const inside = await insideApi(ours.db, from, to, r.ok);
  o.rounds.push({ when, r, stalls, gaps: [], inside, opened, benchLoopMaxMs: loop.max / 1e6, cpu, others });
  return r;
}

/** Every paced round: its requests, latencies, and what the api and PostgreSQL did meanwhile. */
export function roundsTable(rounds: Round[]): void {
  console.log(
    renderTable(
      [
        'round',
        'ok / sent',
        'p50 ms',
        'p99 ms',
        'machine pauses (n / longest ms)',
        'p99 outside them ms',
        'bench late p99 / max, its loop max ms',
        'CPU cores api / mta / worker / PostgreSQL',
        'other messages at the sink /s',
        'api loop delay p99 / max ms',
        'in the api p99 / max ms',
        'connections opened',
        'WAL MB / flushes / a flush mean ms / full-page images / buffers full / checkpoints',
        'PostgreSQL active, by wait',
      ],
      rounds.map(({ when, r, stalls: s, gaps, inside, opened, benchLoopMaxMs, cpu, others }) => [
        when,
        `${r.ok} / ${r.sent}`,
        fixed(r.p50, 1),
        fixed(r.p99, 0),
        gaps.length ? `${gaps.length} / ${fixed(Math.max(...gaps.map((g) => g.ms)), 0)}` : '0',
        fixed(outsideGaps(r, gaps).p99, 0),
        `${lateness(r.late ?? [])}, ${fixed(benchLoopMaxMs, 0)}`,
        cpu.map((c) => fixed(c, 2)).join(' / '),
        fixed(others, 0),
        `${fixed(s.loopP99Ms, 0)} / ${fixed(s.loopMaxMs, 0)}`,
        `${fixed(inside.p99, 0)} / ${fixed(inside.max, 0)}`,
        opened,
        `${fixed(s.wal.mb, 0)} / ${s.wal.syncs} / ${fixed(s.wal.syncMeanMs, 2)} / ${s.wal.fpi} / ${s.wal.buffersFull} / ${s.wal.checkpoints}`,
        s.waits.map((w) => `${w.wait} ${fixed(w.share, 2)}`).join(', ') || 'idle',
      ]),
    ),
  );
  console.log('\nThe ten slowest requests of each round as the api timed them (when answered, UTC: ms):');
  for (const { when, inside } of rounds) {
    const at = (d: Date) => d.toISOString().slice(11, 23);
    console.log(`${when}: ${inside.slowest.map((x) => `${at(x.created_at)} ${x.duration_ms}`).join(', ')}`);
  }
  console.log('\nThe statements PostgreSQL ran in each round (share of the 10 ms samples):');
  for (const { when, stalls } of rounds) {
    console.log(`${when}:`);
    for (const s of stalls.statements) console.log(`  ${fixed(s.share, 2)}  ${s.statement}`);
  }
}

/** How late the bench itself sent a round's requests (its own event loop: it shares the cores with the platform). */
function lateness(late: number[]): string {
  return late.length ? `${fixed(percentile(late, 99), 0)} / ${fixed(late[late.length - 1], 0)}` : '-';
}

/** A paced round of POST /emails, what the api and PostgreSQL did meanwhile, and the machine's pauses in it. */
export interface Round {
  when: string;
  r: AcceptResult;
  stalls: Stalls;
  gaps: Gap[];
  /** The round's requests as the api timed them (its request log's duration_ms: the operation, not the wire). */
  inside: { p99: number; max: number; slowest: { created_at: Date; duration_ms: number }[] };
  /** PostgreSQL connections to the platform's database opened during the round (still open at its end), by process. */
  opened: string;
  /** The bench's own event loop's longest delay in the round: a late answer's read counts in its latency too. */
  benchLoopMaxMs: number;
  /** Cores each process used over the round: api, mta, worker, PostgreSQL (all its processes). */
  cpu: number[];
  /** Messages a second the sink took in the round besides the round's own (the broadcast's, during it). */
  others: number;
}

/** CPU seconds so far of each of `pids`, then of PostgreSQL (all its processes). */
function cpuReading(pids: number[]): number[] {
  return pids.map(cpuOf).concat(cpuOfAll(/^postgres$/));
}

/** The cores each process used between two readings of their CPU seconds `seconds` apart. */
function coresSince(before: number[], after: number[], seconds: number): number[] {
  return after.map((a, i) => (a - before[i]) / seconds);
}

/** The connections to `database` that PostgreSQL started between `from` and `to`, by process (PGAPPNAME). */
async function openedDuring(db: Db, database: string, from: Date, to: Date): Promise<string> {
  const { rows } = await db.raw(
    `select application_name as name, count(*)::int as n from pg_stat_activity
      where datname = ? and backend_start between ? and ? group by 1 order by 1`,
    [database, from, to],
  );
  return rows.map((x: { name: string; n: number }) => `${x.name || '?'} ${x.n}`).join(', ') || '0';
}

/**
 * The api's own timing of the `expected` POST /emails it answered between `from` and `to` (its request log, written
 * a moment after each answer): NaN when they are not all there within 5 s.
 */
async function insideApi(db: Db, from: Date, to: Date, expected: number): Promise<Round['inside']> {
  for (const deadline = Date.now() + 5_000; Date.now() < deadline;) {
    const [row] = (
      await db.raw(
        `select count(*)::int as n, percentile_disc(0.99) within group (order by duration_ms) as p99,
          max(duration_ms) as max from request_logs where method = 'POST' and endpoint = '/emails'
          and created_at >= ? and created_at <= ?`,
        [from, to],
      )
    ).rows;
    if (row.n >= expected) {
      const slowest = await db('request_logs')
        .where({ method: 'POST', endpoint: '/emails' })
        .whereBetween('created_at', [from, to])
        .orderBy('duration_ms', 'desc')
        .limit(10)
        .select('created_at', 'duration_ms');
      return { p99: row.p99, max: row.max, slowest: slowest.sort((a, b) => a.created_at - b.created_at) };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { p99: NaN, max: NaN, slowest: [] };
}
