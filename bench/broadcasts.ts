// BENCH_ONLY=broadcasts: a broadcast to BENCH_BROADCAST_SIZE contacts (100,000 by default) through the real api,
// worker and mta, each its own process, to Postfix's smtp-sink, from `send` to the last message the sink accepted:
// messages/s, time to first delivery, and the ratio to the single-send delivered rate measured in the same run
// (POST /emails as fast as it goes, first request to last message at the sink). POST /emails at 100/s for
// BENCH_BROADCAST_PACED_SECONDS in BENCH_BROADCAST_ROUNDS rounds alone (before the broadcast and after it) and as many
// spread over the broadcast's delivery: the median p99 of each side. Peak RSS of every process over the broadcast,
// and whether it stays flat (its peak in the delivery's last quarter against the first half). The targets of issue #20
// print PASS/FAIL; they never fail the run.
import { performance } from 'node:perf_hooks';
import { freePort, startSink, type Sink } from './sending-peers.ts';
import { startSmtpSink } from '../test/helpers/smtp-sink.ts';
import { existsSync } from 'node:fs';
import { apiAccept, RECIPIENT_DOMAIN, SENDER_DOMAIN, startOurs, type AcceptResult, type Ours } from './sending-ours.ts';
import { spawnPlatform } from './servers.ts';
import { startWindow, trackRssByQuarter, type RssByQuarter, type WindowStats } from './proc.ts';
import { USER_AGENT } from './load.ts';
import { fixed, renderTable } from './table.ts';
import { median } from './sending-report.ts';
import { newId } from '../shared/ids.ts';
import type { Db } from '../shared/db/knex.ts';
import { pacedRound, roundsTable, type Round } from './broadcast-rounds.ts';
import { gapsDuring, outsideGaps, startStallProbe } from './stall-probe.ts';

export interface BroadcastBenchOptions {
  size: number;
  singles: number;
  pacedSeconds: number;
  /** Rounds of paced sends during the broadcast, and alone (all but one before it, one after). */
  rounds: number;
  redisUrl: string;
  onCleanup(step: () => Promise<unknown>): void;
}

export function startWorker(ours: Ours, o: Pick<BroadcastBenchOptions, 'onCleanup'>) {
  const child = spawnPlatform('worker/main.ts', { ...ours.env, PUBLIC_BASE_URL: ours.api.url }, ['ignore', 2, 2]);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  };
  o.onCleanup(stop);
  return { pid: child.pid ?? -1, stop };
}

/** A segment of `n` contacts of the bench team at the sink's domain, written with one statement each. */
export async function seed(ours: Ours, n: number): Promise<{ teamId: string; segment: string }> {
  const team = await ours.db('teams').where({ name: 'Bench sending' }).first('id');
  const segment = newId();
  await ours.db('segments').insert({ id: segment, team_id: team.id, name: 'Everyone' });
  // UUIDs in id order as v7 would be (a prefix per row): the fan-out walks by id.
  await ours.db.raw(
    `insert into contacts (id, team_id, email, first_name)
     select (lpad(to_hex(i), 12, '0') || '7000800000000000' || lpad(to_hex(i), 4, '0'))::uuid, ?, 'reader' || i || '@' || ?, 'Reader' || i
     from generate_series(1, ?) i`,
    [team.id, RECIPIENT_DOMAIN, n],
  );
  await ours.db.raw(
    `insert into contact_segments (segment_id, contact_id, team_id) select ?, id, team_id from contacts where team_id = ?`,
    [segment, team.id],
  );
  return { teamId: team.id, segment };
}

export async function send(ours: Ours, segment: string): Promise<string> {
  const res = await fetch(`${ours.api.url}/broadcasts`, {
    method: 'POST',
    headers: { 'user-agent': USER_AGENT, authorization: `Bearer ${ours.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      segment_id: segment,
      from: `Bench <news@${SENDER_DOMAIN}>`,
      subject: 'News for {{{FIRST_NAME|you}}}',
      html: '<p>Hello {{{FIRST_NAME|there}}},</p><p>The news.</p><p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
      send: true,
    }),
  });
  const body = (await res.json()) as { id: string };
  if (res.status !== 201) throw new Error(`POST /broadcasts answered ${res.status}: ${JSON.stringify(body)}`);
  return body.id;
}

const mb = (s: WindowStats) => fixed(s.peakRssMb ?? NaN, 0);
const quarters = (r: RssByQuarter) => [r.startMb, ...r.quartersMb].map((m) => fixed(m, 0)).join(' → ');
/**
 * Memory is flat when the last quarter of a broadcast's delivery peaks at most this much above the first half: a
 * process whose memory grows with the messages is at its highest at the end, while a peak in the third quarter that
 * is gone by the fourth is a collection's timing, not growth.
 */
const FLAT = 1.1;

/**
 * Postfix's smtp-sink when installed (as the sending suite uses); else the tests' loopback sink in this process,
 * counting messages and dropping their bytes as they come (a sink in the bench's own process costs it some CPU).
 */
async function anySink(): Promise<Sink> {
  if (existsSync('/usr/sbin/smtp-sink')) return startSink();
  const sink = await startSmtpSink();
  let count = 0;
  const drain = setInterval(() => {
    count += sink.messages.length;
    sink.messages.length = 0;
  }, 10);
  const counted = () => count + sink.messages.length;
  return {
    port: sink.port,
    pid: process.pid,
    count: counted,
    async waitFor(n, ms) {
      const deadline = performance.now() + ms;
      while (counted() < n) {
        if (performance.now() > deadline) return undefined;
        await new Promise((r) => setTimeout(r, 5));
      }
      return performance.now();
    },
    async close() {
      clearInterval(drain);
      await sink.close();
    },
  };
}

/**
 * BENCH_BROADCAST_AUTOVACUUM=1, on a server that runs without autovacuum (this machine's): the run with it on, as a
 * production server has it (ALTER SYSTEM, a superuser's; reset when the run ends). The worker, started after it, sees
 * it on and leaves the analyzes to it, as it does on such a server.
 */
async function autovacuumForTheRun(db: Db, onCleanup: BroadcastBenchOptions['onCleanup']): Promise<void> {
  const on = async () => (await db.raw(`select current_setting('autovacuum') as v`)).rows[0].v === 'on';
  if (await on()) return;
  const reload = async (sql: string, want: boolean) => {
    await db.raw(sql);
    await db.raw('select pg_reload_conf()');
    // The backends read the file at their next statement after the signal: poll until this one has.
    for (let i = 0; i < 100 && (await on()) !== want; i++) await new Promise((r) => setTimeout(r, 20));
  };
  onCleanup(() => reload('alter system reset autovacuum', false));
  await reload('alter system set autovacuum = on', true);
  console.error('bench: broadcasts: autovacuum on for the run (reset at its end)');
}

export async function runBroadcastBench(o: BroadcastBenchOptions): Promise<void> {
  const sink = await anySink();
  o.onCleanup(() => sink.close());
  const metricsPort = await freePort();
  const ours = await startOurs({
    sinkPort: sink.port,
    redisUrl: o.redisUrl,
    mtaConcurrency: 100,
    maxPerDestination: 20,
    onCleanup: o.onCleanup,
    // The commits' flushes of the WAL timed (pg_stat_wal.wal_sync_time: each round's mean flush); more settings of
    // the platform's sessions from BENCH_BROADCAST_PGOPTIONS (`-c log_min_duration_statement=15`, say).
    extraEnv: {
      METRICS_API_PORT: String(metricsPort),
      PGOPTIONS: `-c track_wal_io_timing=on ${process.env.BENCH_BROADCAST_PGOPTIONS ?? ''}`.trim(),
    },
    // Its worker analyzes as the platform's does.
    analyze: false,
  });
  if (process.env.BENCH_BROADCAST_AUTOVACUUM === '1') await autovacuumForTheRun(ours.db, o.onCleanup);
  const worker = startWorker(ours, o);
  const { segment } = await seed(ours, o.size);
  console.error(`bench: broadcasts: ${o.size} contacts seeded`);

  // Single sends: POST /emails as fast as the api takes them, first request to the last message at the sink.
  const before = sink.count();
  const singles = await apiAccept(ours, o.singles, 32, 1024);
  const singlesDone = await sink.waitFor(before + singles.ok, 300_000);
  const singleRate = singlesDone ? singles.ok / ((singlesDone - singles.startedAt) / 1000) : NaN;

  // POST /emails at 100/s in rounds: `rounds - 1` alone before the broadcast and one after it, `rounds` during it
  // spread over its run (each round's p99 is its tenth-slowest request of 1,000: one round is mostly noise).
  // Each round with what the api and PostgreSQL did meanwhile (bench/tracking-stalls.ts).
  const database = new URL(ours.databaseUrl).pathname.slice(1);
  const rounds: Round[] = [];
  // The machine's own pauses over the rounds (bench/stall-probe.ts): each round's p99 is also given without them.
  const probe = startStallProbe();
  o.onCleanup(() => probe.stop());
  const paced = (when: string) =>
    pacedRound(ours, { database, metricsPort, seconds: o.pacedSeconds, pids: [worker.pid], rounds, sink }, when);
  const alone: AcceptResult[] = [];
  for (let i = 1; i < o.rounds; i++) alone.push(await paced('alone, before'));

  // The broadcast: send → first message at the sink → last.
  const base = sink.count();
  const windows = { api: startWindow(ours.api.pid), mta: startWindow(ours.mta.pid), worker: startWindow(worker.pid) };
  const progress = () => (sink.count() - base) / o.size;
  const memory = {
    api: trackRssByQuarter(ours.api.pid, progress),
    worker: trackRssByQuarter(worker.pid, progress),
    mta: trackRssByQuarter(ours.mta.pid, progress),
  };
  const started = performance.now();
  await send(ours, segment);
  const first = await sink.waitFor(base + 1, 120_000);
  const during: AcceptResult[] = [];
  let pacedOk = 0;
  for (let i = 0; i < o.rounds; i++) {
    if (i > 0) {
      // The next round once another share of the audience is delivered (the sink counts the paced sends too).
      const reached = await sink.waitFor(base + pacedOk + Math.round((o.size * i) / o.rounds), 3_600_000);
      if (reached === undefined || sink.count() >= base + pacedOk + o.size) break;
    }
    const r = await paced(`during, ${i + 1} of ${o.rounds}`);
    during.push(r);
    pacedOk += r.ok;
  }
  const last = await sink.waitFor(base + o.size + pacedOk, 3_600_000);
  const stats = { api: windows.api.end(), mta: windows.mta.end(), worker: windows.worker.end() };
  const rss = { api: memory.api.stop(), worker: memory.worker.stop(), mta: memory.mta.stop() };
  const seconds = last ? (last - started) / 1000 : NaN;
  const rate = o.size / seconds;
  // BENCH_BROADCAST_VACUUM=1: what autovacuum would do after a broadcast, on a server that runs without it (this
  // machine's: docs/capacity.md), before the round after it.
  if (process.env.BENCH_BROADCAST_VACUUM === '1') {
    const at = performance.now();
    await ours.db.raw('vacuum analyze email_recipients, emails, events, delivery_attempts, contact_activity');
    console.error(`bench: broadcasts: vacuum analyze took ${fixed((performance.now() - at) / 1000, 1)} s`);
  }
  alone.push(await paced('alone, after'));
  const gaps = await probe.stop();
  for (const round of rounds) round.gaps = gapsDuring(gaps, round.r);
  report(o.size, {
    seconds,
    rate,
    firstSeconds: first ? (first - started) / 1000 : NaN,
    singles: singles.ok,
    singleRate,
    alone,
    during,
    stats,
    rss,
    rounds,
  });
  await worker.stop();
}

interface Outcome {
  seconds: number;
  rate: number;
  firstSeconds: number;
  singles: number;
  singleRate: number;
  alone: AcceptResult[];
  during: AcceptResult[];
  stats: Record<'api' | 'mta' | 'worker', WindowStats>;
  rss: Record<'api' | 'worker' | 'mta', RssByQuarter>;
  rounds: Round[];
}

/** The broadcast's table, its rounds and the PASS/FAIL lines of issue #20's targets. */
function report(size: number, r: Outcome): void {
  const p99s = (rs: AcceptResult[]) => rs.map((x) => fixed(x.p99, 0)).join(', ');
  const aloneP99 = median(r.alone.map((x) => x.p99)) ?? NaN;
  const duringP99 = median(r.during.map((x) => x.p99)) ?? NaN;

  console.log('');
  console.log(
    `broadcasts: ${size} recipients${size < 100_000 ? ' (BENCH_BROADCAST_SIZE: smaller than the 100,000 of the target)' : ''}`,
  );
  console.log(
    renderTable(
      ['measure', 'value'],
      [
        ['send → last message accepted (s)', fixed(r.seconds, 1)],
        ['broadcast messages/s', fixed(r.rate, 0)],
        ['time to first delivery (s)', fixed(r.firstSeconds, 2)],
        [`single sends delivered/s (${r.singles})`, fixed(r.singleRate, 0)],
        ['ratio broadcast / single', fixed(r.rate / r.singleRate, 2)],
        [
          `POST /emails p99 at 100/s alone: rounds (before…, after) → median (ms)`,
          `${p99s(r.alone)} → ${fixed(aloneP99, 0)}`,
        ],
        [
          `POST /emails p99 at 100/s during the broadcast: rounds → median (ms)`,
          `${p99s(r.during)} → ${fixed(duringP99, 0)}`,
        ],
        ['peak RSS api / worker / mta (MB)', `${mb(r.stats.api)} / ${mb(r.stats.worker)} / ${mb(r.stats.mta)}`],
        [
          'CPU over the broadcast api / worker / mta / the machine (cores)',
          [r.stats.api, r.stats.worker, r.stats.mta].map((x) => fixed((x.cpuPercent ?? NaN) / 100, 2)).join(' / ') +
            ` / ${fixed((r.stats.mta.machineCpuPercent ?? NaN) / 100, 2)}`,
        ],
        ...(['api', 'worker', 'mta'] as const).map((name) => [
          `RSS of the ${name}: at send → peak in each quarter of the delivery (MB)`,
          quarters(r.rss[name]),
        ]),
      ],
    ),
  );
  roundsTable(r.rounds);
  const verdict = (ok: boolean, what: string) => console.log(`${ok ? 'PASS' : 'FAIL'} ${what}`);
  verdict(r.firstSeconds < 5, 'time to first delivery under 5 s');
  verdict(r.rate / r.singleRate >= 0.8, 'broadcast rate at least 0.8x the single-send delivered rate');
  verdict(
    duringP99 <= 1.5 * aloneP99,
    `POST /emails p99 during the broadcast within 1.5x of alone (medians of the rounds: ${fixed(duringP99 / aloneP99, 2)}x)`,
  );
  const outside = (when: RegExp) =>
    median(r.rounds.filter((x) => when.test(x.when)).map((x) => outsideGaps(x.r, x.gaps).p99)) ?? NaN;
  const [aloneOut, duringOut] = [outside(/^alone/), outside(/^during/)];
  verdict(
    duringOut <= 1.5 * aloneOut,
    `the same outside the machine's pauses (what the broadcast itself adds): ${fixed(duringOut, 0)} against ${fixed(aloneOut, 0)} ms, ${fixed(duringOut / aloneOut, 2)}x`,
  );
  // A last quarter without a sample (a delivery over in a moment) is not flat: nothing was seen.
  const flat = ([q1, q2, , q4]: number[]) => q4 > 0 && q4 <= FLAT * Math.max(q1, q2);
  const grown = Object.entries(r.rss).filter(([, m]) => !flat(m.quartersMb));
  verdict(
    grown.length === 0,
    `memory flat: no process's peak RSS in the last quarter of the delivery above ${FLAT}x its peak in the first half` +
      (grown.length ? ` (${grown.map(([name]) => name).join(', ')})` : ''),
  );
}
