// The tracking suite of `npm run bench` (BENCH_ONLY=tracking; bench/README.md, "The tracking suite"): the real api
// (with its tracking listener) and mta delivering to smtp-sink, in one run:
// 1. the mta's CPU per message, the same newsletter (10 KB of HTML, ten links, one recipient) from a domain with
//    tracking off and one with it on, in alternating rounds: the difference is what tracking costs (target < 2 ms);
// 2. the tracking listener alone: real recipients' pixels and links at a steady rate (target 2,000/s, p99 < 20 ms),
//    every hit recorded;
// 3. POST /emails at a steady rate, alone and beside that stream of hits (target: p99 at most 20 % higher);
// 4. GET /emails/metrics over 90 days for a team whose counters hold 10 million events (target < 200 ms).
// Targets print PASS/FAIL lines; only a suite that cannot run fails the bench.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fixed } from './table.ts';
import { cpuOf, cpuOfAll } from './proc.ts';
import { freePort, startSink } from './sending-peers.ts';
import { apiPaced, startOurs } from './sending-ours.ts';
import { startServer } from './servers.ts';
import { deliverRound, hitPaths, hits, trackedDomain, type CpuRun } from './tracking-load.ts';
import { queryMetrics, seedMetrics, EVENTS } from './tracking-metrics.ts';
import { report, type SendRun } from './tracking-report.ts';
import { watchStalls } from './tracking-stalls.ts';
import { gapsDuring, startStallProbe } from './stall-probe.ts';

export interface TrackingBenchOptions {
  /** Messages per CPU round and mode. */
  messages: number;
  rounds: number;
  /** Hits per second and seconds of the listener's run. */
  hitRate: number;
  hitSeconds: number;
  /** POST /emails per second and seconds, alone and beside the hits. */
  sendRate: number;
  sendSeconds: number;
  /** GET /emails/metrics requests per query shape. */
  queries: number;
  /** The hits on a second api process (BENCH_TRACK_SEPARATE=1), the REST one left to the sends. */
  separate: boolean;
  redisUrl: string;
  onCleanup(step: () => Promise<unknown>): void;
}

async function cpuRounds(o: TrackingBenchOptions, ctx: Awaited<ReturnType<typeof start>>): Promise<CpuRun[]> {
  // A warm-up of each, not reported: the first messages pay for JIT, pools and caches.
  await deliverRound(ctx.ours, ctx.sink, 200, false, 120_000);
  await deliverRound(ctx.ours, ctx.sink, 200, true, 120_000);
  const runs: CpuRun[] = [];
  for (let r = 0; r < o.rounds; r++) {
    for (const tracked of r % 2 ? [true, false] : [false, true]) {
      console.error(`bench: tracking: round ${r + 1}, tracking ${tracked ? 'on' : 'off'}: ${o.messages} messages`);
      runs.push(await deliverRound(ctx.ours, ctx.sink, o.messages, tracked, 300_000));
    }
  }
  return runs;
}

async function start(o: TrackingBenchOptions) {
  const sink = await startSink();
  o.onCleanup(() => sink.close());
  const trackingPort = await freePort();
  const metricsPort = await freePort();
  const secrets = randomBytes(32).toString('base64');
  const env = {
    SECRETS_KEY: secrets,
    TRACKING_PORT: String(trackingPort),
    METRICS_API_PORT: String(metricsPort),
    TRACKING_LINK_SCHEME: 'http',
    TRACKING_LINK_PORT: String(trackingPort),
    // The bench's hits come right after delivery: no scanner window, so every hit is a person's, recorded in full.
    TRACKING_MACHINE_WINDOW_SECONDS: '0',
  };
  const ours = await startOurs({
    sinkPort: sink.port,
    redisUrl: o.redisUrl,
    mtaConcurrency: 100,
    maxPerDestination: 20,
    onCleanup: o.onCleanup,
    extraEnv: env,
  });
  const domainId = await trackedDomain(ours, env);
  let trackingPid = ours.api.pid;
  if (o.separate) {
    // The hits on an api process of their own (the tracking names on another api copy, docs/tracking.md); the REST
    // api's own tracking listener moved out of the way.
    await ours.api.stop();
    const restApi = await startServer('api (rest)', 'api/main.ts', {
      ...ours.env,
      ...env,
      TRACKING_PORT: String(await freePort()),
    });
    o.onCleanup(() => restApi.stop());
    const trackingApi = await startServer('api (tracking)', 'api/main.ts', {
      ...ours.env,
      ...env,
      METRICS_API_PORT: String(await freePort()),
    });
    o.onCleanup(() => trackingApi.stop());
    (ours as { api: typeof restApi }).api = restApi;
    trackingPid = trackingApi.pid;
  }
  return {
    sink,
    ours,
    trackingPort,
    trackingPid,
    secrets,
    domainId,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
  };
}

async function sendsBesideHits(o: TrackingBenchOptions, ctx: Awaited<ReturnType<typeof start>>, paths: string) {
  // The mta stops first: the accepts' latency should move with the hits alone, not with deliveries running beside.
  await ctx.ours.mta.stop();
  const n = o.sendRate * o.sendSeconds;
  const rows: SendRun[] = [];
  const database = new URL(ctx.ours.databaseUrl).pathname.slice(1);
  const probe = startStallProbe();
  o.onCleanup(() => probe.stop());
  for (const withHits of Array.from({ length: o.rounds }, () => [false, true]).flat()) {
    console.error(`bench: tracking: POST /emails at ${o.sendRate}/s ${withHits ? 'beside' : 'without'} hits`);
    // The sends start once the hits' unmeasured first seconds are done, and end before the hits do.
    let warm: () => void = () => undefined;
    const warmed = new Promise<void>((r) => (warm = r));
    const load = withHits ? hits(ctx.trackingPort, paths, o.hitRate, o.sendSeconds + 1, warm) : undefined;
    if (load) await Promise.race([warmed, load]);
    const watched = await watchStalls(ctx.ours.db, database, ctx.metricsUrl);
    const sends = await apiPaced(ctx.ours, n, o.sendRate, 2048);
    const stalls = await watched();
    rows.push({ hits: withHits, sends, load: load ? await load : undefined, stalls, gaps: [] });
  }
  const gaps = await probe.stop();
  for (const r of rows) r.gaps = gapsDuring(gaps, r.sends);
  return { rows, realtime: probe.realtime };
}

export async function runTrackingBench(o: TrackingBenchOptions): Promise<void> {
  const t0 = performance.now();
  const ctx = await start(o);
  const cpu = await cpuRounds(o, ctx);
  const dir = await mkdtemp(path.join(tmpdir(), 'pw-bench-track-'));
  o.onCleanup(() => rm(dir, { recursive: true, force: true }));
  const paths = path.join(dir, 'paths.txt');
  await hitPaths(ctx.ours, ctx.secrets, ctx.domainId, paths);
  console.error(`bench: tracking: ${o.hitRate} hits/s for ${o.hitSeconds} s on the tracking listener`);
  const before = Number((await ctx.ours.db('email_engagements').count({ n: '*' }).first())!.n);
  const database = new URL(ctx.ours.databaseUrl).pathname.slice(1);
  const cpu0 = { api: cpuOf(ctx.trackingPid), pg: cpuOfAll(/^postgres$/, database) };
  const alone = await hits(ctx.trackingPort, paths, o.hitRate, o.hitSeconds);
  await new Promise((r) => setTimeout(r, 1000));
  const cpuPerHit = {
    api: ((cpuOf(ctx.trackingPid) - cpu0.api) * 1e6) / (alone.requests + alone.warmup),
    pg: ((cpuOfAll(/^postgres$/, database) - cpu0.pg) * 1e6) / (alone.requests + alone.warmup),
  };
  const recorded = Number((await ctx.ours.db('email_engagements').count({ n: '*' }).first())!.n) - before;
  const sends = await sendsBesideHits(o, ctx, paths);
  console.error(`bench: tracking: seeding the counters of ${EVENTS} events and 9 other teams'`);
  const seeded = await seedMetrics(ctx.ours);
  const queries = await queryMetrics(ctx.ours, seeded, o.queries);

  report(o, { cpu, alone, recorded, cpuPerHit, sends: sends.rows, probeRealtime: sends.realtime, queries });
  console.log(`(tracking suite: ${fixed((performance.now() - t0) / 1000, 0)} s)`);
}
