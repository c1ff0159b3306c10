// The sending suite of `npm run bench` (see bench/README.md, "The sending suite"): 10 KB messages into one
// loopback smtp-sink, side by side in one run: the ceiling (smtp-source → smtp-sink), Postfix relaying
// (smtp-source → Postfix → smtp-sink), and ours (POST /emails and SMTP submission → api/mta → smtp-sink, DKIM
// RSA-2048), Postfix and ours in alternating rounds. Accepted and delivered rates, latencies and peak RSS; the
// issue's two targets as PASS/FAIL lines on the median over the rounds (sending-report.ts).
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { startWindow, type WindowStats } from './proc.ts';
import { fixed } from './table.ts';
import { peakSampler, smtpSource, startPostfixRelay, startSink, type Sink } from './sending-peers.ts';
import { apiAccept, apiPaced, smtpAccept, startOurs, type AcceptResult, type Ours } from './sending-ours.ts';
import { report, type Row, type RowKind } from './sending-report.ts';

export interface SendingBenchOptions {
  /** Messages per measured run (ceiling, Postfix, API at full speed, SMTP submission). */
  messages: number;
  /** Seconds of the fixed-rate API run. */
  rateSeconds: number;
  /** Sends per second of the fixed-rate API run. */
  rate: number;
  /** Client connections / SMTP sessions / smtp-source sessions. */
  sessions: number;
  bytes: number;
  /** How long to wait for a run's messages to reach the sink. */
  drainSeconds: number;
  mtaConcurrency: number;
  maxPerDestination: number;
  /** Rounds of Postfix then ours (API at full speed and at the steady rate); the targets take their median. */
  rounds: number;
  redisUrl: string;
  onCleanup(step: () => Promise<unknown>): void;
}

const mb = (kb: number | undefined) => (kb === undefined ? undefined : kb / 1024);

/** Sends before the measured rounds, not reported (see the warm-up). */
const WARM_UP_API = 1000;
const WARM_UP_SMTP = 200;

/** Waits for the sink to reach `target` messages; answers when, or undefined (and says so) on timeout. */
async function delivered(
  sink: Sink,
  target: number,
  o: SendingBenchOptions,
  what: string,
): Promise<number | undefined> {
  const at = await sink.waitFor(target, o.drainSeconds * 1000);
  if (at === undefined)
    console.error(
      `bench: sending: ${what}: the sink has ${sink.count()} of ${target} messages after ${o.drainSeconds} s`,
    );
  return at;
}

function oursRss(api: WindowStats, mta: WindowStats): string {
  return `api ${fixed(api.peakRssMb, 0)} / mta ${fixed(mta.peakRssMb, 0)}`;
}

function oursCpu(api: WindowStats, mta: WindowStats): string {
  return `api ${fixed(api.cpuPercent, 0)} / mta ${fixed(mta.cpuPercent, 0)}`;
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function postfixRound(o: SendingBenchOptions, sink: Sink, round: number): Promise<Row[]> {
  const n = o.messages;
  const postfix = await startPostfixRelay(sink.port);
  o.onCleanup(() => postfix.close());
  try {
    console.error(
      `bench: sending: round ${round}: Postfix relay, smtp-source -d -s ${o.sessions} -l ${o.bytes} -m ${n} → Postfix → smtp-sink`,
    );
    const base = sink.count();
    const rss = peakSampler(() => postfix.rssKb());
    const w = startWindow(sink.pid);
    const t0 = performance.now();
    const acceptMs = await smtpSource({
      port: postfix.port,
      messages: n,
      sessions: o.sessions,
      reuse: true,
      bytes: o.bytes,
    });
    const acceptStats = w.end();
    const w2 = startWindow(sink.pid);
    const at = await delivered(sink, base + n, o, 'Postfix');
    const deliverStats = w2.end();
    const peak = mb(rss.stop());
    const seen = sink.count() - base;
    // The sink counts a message at its final ".", a moment before Postfix removes the queue file.
    let left = await postfix.queued();
    for (let i = 0; left > 0 && i < 100; i++, left = await postfix.queued())
      await new Promise((r) => setTimeout(r, 100));
    const rssText = `postfix ${fixed(peak, 0)} (sum)`;
    return [
      {
        kind: 'postfix-accepted',
        round,
        name: `(c) Postfix accepted (smtp-source -d -s ${o.sessions})`,
        side: 'peer',
        messages: n,
        rate: n / (acceptMs / 1000),
        rss: rssText,
        machineCpu: acceptStats.machineCpuPercent,
        errors: 0,
      },
      {
        kind: 'postfix-delivered',
        round,
        name: '(c) Postfix delivered (start → last at sink)',
        side: 'peer',
        messages: seen,
        rate: at === undefined ? undefined : n / ((at - t0) / 1000),
        rss: rssText,
        machineCpu: deliverStats.machineCpuPercent,
        errors: n - seen,
        note: left ? `${left} still queued` : undefined,
      },
    ];
  } finally {
    await postfix.close();
  }
}

/** The two rows of one measured run of ours: what was accepted, and what was delivered behind it. */
function acceptedAndDelivered(
  m: Awaited<ReturnType<typeof measured>>,
  accepted: { kind: RowKind; name: string },
  delivered: { kind: RowKind; name: string },
  round?: number,
): Row[] {
  return [
    {
      ...accepted,
      round,
      side: 'ours',
      messages: m.r.ok,
      rate: m.r.rate,
      p50: m.r.p50,
      p99: m.r.p99,
      rss: m.rss,
      cpu: m.acceptCpu,
      cpuMs: m.acceptMsPerMessage,
      machineCpu: m.machineCpu,
      errors: m.r.failed,
      vs: 'accepted',
    },
    {
      ...delivered,
      round,
      side: 'ours',
      messages: m.seen,
      rate: m.at === undefined ? undefined : m.seen / ((m.at - m.r.startedAt) / 1000),
      rss: m.rss,
      cpu: m.drainCpu,
      cpuMs: m.deliveredMsPerMessage,
      machineCpu: m.deliveredCpu,
      errors: m.r.ok - m.seen,
      vs: 'delivered',
    },
  ];
}

/** One accepting run of ours, watched until the sink has its messages: CPU, RSS and rates of the api and mta. */
async function measured(
  o: SendingBenchOptions,
  ours: Ours,
  sink: Sink,
  label: string,
  go: () => Promise<AcceptResult>,
) {
  const base = sink.count();
  const t0 = performance.now();
  const api = startWindow(ours.api.pid);
  const mta = startWindow(ours.mta.pid);
  const mtaAccept = startWindow(ours.mta.pid);
  const r = await go();
  const apiAtAccept = api.end();
  const mtaAtAccept = mtaAccept.end();
  const t1 = performance.now();
  const apiW = startWindow(ours.api.pid);
  const at = await delivered(sink, base + r.ok, o, label);
  const mtaStats = mta.end();
  const apiAll = apiW.end();
  const t2 = performance.now();
  // CPU ms per message: % of a core x the window's length / the messages.
  const ms = (w: WindowStats, from: number, to: number) => ((w.cpuPercent ?? NaN) / 100) * (to - from);
  const perMessage = (apiMs: number, mtaMs: number, count: number) =>
    `api ${fixed(apiMs / count, 1)} / mta ${fixed(mtaMs / count, 1)}`;
  const seen = sink.count() - base;
  return {
    acceptMsPerMessage: perMessage(ms(apiAtAccept, t0, t1), ms(mtaAtAccept, t0, t1), r.ok),
    deliveredMsPerMessage: perMessage(ms(apiAtAccept, t0, t1) + ms(apiAll, t1, t2), ms(mtaStats, t0, t2), seen),
    r,
    at,
    seen,
    rss: oursRss(apiAtAccept, mtaStats),
    machineCpu: apiAtAccept.machineCpuPercent,
    acceptCpu: oursCpu(apiAtAccept, mtaAtAccept),
    deliveredCpu: mtaStats.machineCpuPercent,
    // Over the whole row (accept and drain): the api's CPU after the accepts is ~0, so weigh it by time.
    drainCpu: oursCpu(
      {
        cpuPercent:
          ((apiAtAccept.cpuPercent ?? 0) * r.wallMs +
            (apiAll.cpuPercent ?? 0) * ((at ?? performance.now()) - r.startedAt - r.wallMs)) /
          ((at ?? performance.now()) - r.startedAt),
      },
      mtaStats,
    ),
  };
}

/**
 * A round of ours: the API at full speed (accepted, and delivered behind it), then at the steady rate with the mta
 * delivering.
 */
async function oursRound(o: SendingBenchOptions, ours: Ours, sink: Sink, round: number): Promise<Row[]> {
  const n = o.messages;
  console.error(`bench: sending: round ${round}: POST /emails x${n}, ${o.sessions} connections, full speed`);
  const m = await measured(o, ours, sink, 'API', () => apiAccept(ours, n, o.sessions, o.bytes));
  const count = Math.round(o.rate * o.rateSeconds);
  console.error(`bench: sending: round ${round}: POST /emails x${count} at ${o.rate}/s`);
  const s = await measured(o, ours, sink, 'API steady rate', () => apiPaced(ours, count, o.rate, o.bytes));
  return [
    ...acceptedAndDelivered(
      m,
      { kind: 'api-accepted', name: `(a) ours API accepted (POST /emails, ${o.sessions} conns)` },
      { kind: 'api-delivered', name: '(b) ours delivered after API (1st accept → last at sink)' },
      round,
    ),
    {
      kind: 'steady',
      round,
      name: `(a) ours API accepted at a steady ${o.rate}/s (open loop)`,
      side: 'ours',
      messages: s.r.ok,
      rate: s.r.rate,
      p50: s.r.p50,
      p99: s.r.p99,
      rss: s.rss,
      cpu: s.acceptCpu,
      cpuMs: s.acceptMsPerMessage,
      machineCpu: s.machineCpu,
      errors: s.r.failed + (s.r.ok - s.seen),
    },
  ];
}

/** (d) The ceiling: smtp-source straight into the sink, connections reused. */
async function ceilingRow(o: SendingBenchOptions, sink: Sink): Promise<Row> {
  const n = o.messages;
  console.error(`bench: sending: ceiling, smtp-source -d -s ${o.sessions} -l ${o.bytes} -m ${n} → smtp-sink`);
  const base = sink.count();
  const w = startWindow(sink.pid);
  const ms = await smtpSource({ port: sink.port, messages: n, sessions: o.sessions, reuse: true, bytes: o.bytes });
  const stats = w.end();
  const seen = sink.count() - base;
  return {
    kind: 'ceiling',
    name: '(d) ceiling: smtp-source -d → smtp-sink',
    side: 'peer',
    messages: seen,
    rate: seen / (ms / 1000),
    machineCpu: stats.machineCpuPercent,
    errors: n - seen,
  };
}

/**
 * Warm-up, not reported: JIT, connection pools, the signing threads, the MTA's sessions to the sink. V8 compiles a
 * function with its optimising tiers only after many calls: with a warm-up of 100 sends the first round's accept
 * ran at ~75 % of the later rounds' speed, every time.
 */
async function warmUp(o: SendingBenchOptions, ours: Ours, sink: Sink): Promise<void> {
  const [byApi, bySmtp] = [WARM_UP_API, WARM_UP_SMTP];
  console.error(`bench: sending: warm-up (${byApi} by API, ${bySmtp} by SMTP)`);
  const base = sink.count();
  const a = await apiAccept(ours, byApi, o.sessions, o.bytes);
  const s = await smtpAccept(ours, bySmtp, o.sessions, o.bytes);
  if (a.ok !== byApi || s.ok !== bySmtp)
    throw new Error(
      `warm-up: ${a.ok}/${byApi} API and ${s.ok}/${bySmtp} SMTP accepted (see the errors above; is the setup right?)`,
    );
  if ((await delivered(sink, base + byApi + bySmtp, o, 'warm-up')) === undefined)
    throw new Error(`warm-up: not delivered (recipients: ${JSON.stringify(await ours.recipients())})`);
}

/**
 * The steady rate with the mta stopped until the last answer: the accept path alone, without delivery sharing the
 * CPU. The mta then delivers the backlog (counted in errors if it does not).
 */
async function mtaStoppedRow(o: SendingBenchOptions, ours: Ours, sink: Sink): Promise<Row> {
  const count = Math.round(o.rate * o.rateSeconds);
  console.error(`bench: sending: POST /emails x${count} at ${o.rate}/s, the mta stopped meanwhile`);
  const held = await measured(o, ours, sink, 'API steady rate, mta stopped', async () => {
    process.kill(ours.mta.pid, 'SIGSTOP');
    try {
      return await apiPaced(ours, count, o.rate, o.bytes);
    } finally {
      process.kill(ours.mta.pid, 'SIGCONT');
    }
  });
  return {
    kind: 'steady-mta-stopped',
    name: `(a) ours API at a steady ${o.rate}/s, mta stopped meanwhile`,
    side: 'ours',
    messages: held.r.ok,
    rate: held.r.rate,
    p50: held.r.p50,
    p99: held.r.p99,
    rss: held.rss,
    cpu: held.acceptCpu,
    cpuMs: held.acceptMsPerMessage,
    machineCpu: held.machineCpu,
    errors: held.r.failed + (held.r.ok - held.seen),
  };
}

/** SMTP submission on `sessions` sessions kept open: accepted, and delivered behind it. */
async function smtpRows(o: SendingBenchOptions, ours: Ours, sink: Sink): Promise<Row[]> {
  const n = o.messages;
  console.error(`bench: sending: SMTP submission x${n}, ${o.sessions} sessions`);
  const m = await measured(o, ours, sink, 'SMTP', () => smtpAccept(ours, n, o.sessions, o.bytes));
  return acceptedAndDelivered(
    m,
    { kind: 'smtp-accepted', name: `(a) ours SMTP accepted (${o.sessions} STARTTLS sessions)` },
    { kind: 'smtp-delivered', name: '(b) ours delivered after SMTP (1st accept → last at sink)' },
  );
}

/** Our email_recipients by status once every one is delivered, or after 10 s. */
async function settledRecipients(ours: Ours | undefined): Promise<Record<string, number> | undefined> {
  // The sink counts a message at its final "."; the mta records the delivery just after: give it a moment.
  let recipients: Record<string, number> | undefined;
  for (let i = 0; ours && i < 50; i++) {
    recipients = await ours.recipients().catch(() => undefined);
    if (!recipients || Object.keys(recipients).every((k) => k === 'delivered')) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return recipients;
}

export async function runSendingBench(o: SendingBenchOptions): Promise<void> {
  const rows: Row[] = [];
  const startLoad = loadavg();
  let ours: Ours | undefined;
  try {
    const sink = await startSink();
    o.onCleanup(() => sink.close());
    rows.push(await ceilingRow(o, sink));

    // Ours stay up, idle, while each round's Postfix instance runs (its own instance, stopped before ours go on).
    console.error('bench: sending: starting our api and mta');
    ours = await startOurs({
      sinkPort: sink.port,
      redisUrl: o.redisUrl,
      mtaConcurrency: o.mtaConcurrency,
      maxPerDestination: o.maxPerDestination,
      onCleanup: o.onCleanup,
    });
    await warmUp(o, ours, sink);
    for (let round = 1; round <= o.rounds; round++) {
      rows.push(...(await postfixRound(o, sink, round)));
      rows.push(...(await oursRound(o, ours, sink, round)));
    }
    rows.push(await mtaStoppedRow(o, ours, sink));
    rows.push(...(await smtpRows(o, ours, sink)));
  } catch (err) {
    console.error(`bench: sending: ${(err as Error).stack ?? err}`);
    if (!rows.length) throw err;
    console.log('bench: sending: stopped early, the rows measured so far:');
  }
  report(rows, {
    bytes: o.bytes,
    rate: o.rate,
    mtaConcurrency: o.mtaConcurrency,
    maxPerDestination: o.maxPerDestination,
    recipients: await settledRecipients(ours),
    load: `${startLoad} at the start, ${loadavg()} at the end`,
  });
}
