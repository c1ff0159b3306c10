// The inbound suite of `npm run bench` (see bench/README.md, "The inbound suite"): the same smtp-source streams
// (10 KB and 1 MB messages, 20 sessions) into Postfix accepting into its queue (every message held: nothing is
// delivered) and into our MX (the real inbound process, receive workers paused), side by side in one run; then
// the receive job's rate on what our MX stored, and the MX with the receive job running as in production.
// Accepted msgs/s, CPU per message, per-message latency (a nodemailer row), peak RSS; the target as
// PASS/FAIL lines: our acceptance rate at least half of Postfix's (bench/inbound-report.ts).
import { readFileSync, readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import nodemailer from 'nodemailer';
import { cpuSeconds, startWindow } from './proc.ts';
import { peakSampler, smtpSource, startPostfixRelay, type PostfixRelay } from './sending-peers.ts';
import { body } from './sending-ours.ts';
import { RECEIVING_DOMAIN, SENDER_DOMAIN, startInbound, type Inbound } from './inbound-ours.ts';
import { report, type Row } from './inbound-report.ts';

export interface InboundBenchOptions {
  /** 10 KB messages per smtp-source run with connections reused (half as many with a connection per message). */
  messages: number;
  /** 1 MB messages per run. */
  bigMessages: number;
  /** Messages of the latency run (nodemailer, a connection per message). */
  latencyMessages: number;
  sessions: number;
  /** How long the receive job may take to process a backlog. */
  drainSeconds: number;
  redisUrl: string;
  onCleanup(step: () => Promise<unknown>): void;
}

interface Load {
  key: string;
  label: string;
  bytes: number;
  messages: number;
  client: 'smtp-source' | 'nodemailer';
  reuse: boolean;
}

interface Sent {
  ok: number;
  failed: number;
  wallMs: number;
  p50?: number;
  p99?: number;
}

const TO = `rcpt@${RECEIVING_DOMAIN}`;
const FROM = `a@${SENDER_DOMAIN}`;

function percentile(sorted: number[], p: number): number | undefined {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : undefined;
}

/** smtp-source, or nodemailer on `sessions` lanes with a new connection (no STARTTLS, as smtp-source) per message. */
async function send(load: Load, port: number, sessions: number): Promise<Sent> {
  if (load.client === 'smtp-source') {
    const t0 = performance.now();
    try {
      const wallMs = await smtpSource({
        port,
        messages: load.messages,
        sessions,
        reuse: load.reuse,
        bytes: load.bytes,
        from: FROM,
        to: TO,
      });
      return { ok: load.messages, failed: 0, wallMs };
    } catch (err) {
      // smtp-source stops at the first SMTP error; the caller counts what was stored.
      console.error(`bench: inbound: smtp-source: ${(err as Error).message.split('\n').slice(0, 3).join(' ')}`);
      return { ok: 0, failed: load.messages, wallMs: performance.now() - t0 };
    }
  }
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    pool: false,
  });
  const text = body(load.bytes, 'latency');
  const ms: number[] = [];
  let next = 0;
  let failed = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: sessions }, async () => {
      while (next < load.messages) {
        const i = next++;
        const s = performance.now();
        try {
          await transport.sendMail({
            envelope: { from: FROM, to: [TO] },
            raw: `From: ${FROM}\r\nTo: ${TO}\r\nSubject: latency ${i}\r\n\r\n${text}`,
          });
          ms.push(performance.now() - s);
        } catch {
          failed++;
        }
      }
    }),
  );
  const wallMs = performance.now() - t0;
  ms.sort((a, b) => a - b);
  return { ok: ms.length, failed, wallMs, p50: percentile(ms, 50), p99: percentile(ms, 99) };
}

/** CPU seconds of a process and of its children, the finished ones included (cutime/cstime: reaped by it). */
function treeCpuSeconds(root: number): number {
  const read = (pid: string) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) };
    } catch {
      return undefined;
    }
  };
  let ticks = read(String(root))?.ticks ?? 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const s = read(pid);
    if (s?.ppid === root) ticks += s.ticks;
  }
  return ticks / 100;
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function postfixSide(o: InboundBenchOptions, loads: Load[], rows: Row[]): Promise<void> {
  // Every message goes to the hold queue as smtpd takes it: cleanup writes and fsyncs the queue file before the
  // 250, exactly as for a message to deliver, and the queue manager never picks it up, so nothing but accepting
  // runs. The relayhost (port 9, nothing there) is never used.
  const postfix: PostfixRelay = await startPostfixRelay(9, [
    'smtpd_client_restrictions = check_client_access static:HOLD',
  ]);
  o.onCleanup(() => postfix.close());
  try {
    for (const load of loads) {
      console.error(`bench: inbound: Postfix, ${load.label} x${load.messages}`);
      const before = await postfix.queued();
      const rss = peakSampler(() => postfix.rssKb());
      const w = startWindow(postfix.masterPid);
      const cpu0 = treeCpuSeconds(postfix.masterPid);
      const sent = await send(load, postfix.port, o.sessions);
      const cpu = treeCpuSeconds(postfix.masterPid) - cpu0;
      const stats = w.end();
      const peak = rss.stop();
      const held = (await postfix.queued()) - before;
      rows.push({
        load: load.label,
        side: 'Postfix',
        what: 'accepted into its queue (held)',
        messages: held,
        rate: sent.ok / (sent.wallMs / 1000),
        p50: sent.p50,
        p99: sent.p99,
        cpuMsPerMessage: (cpu * 1000) / load.messages,
        rssMb: peak / 1024,
        machineCpu: stats.machineCpuPercent,
        errors: sent.failed + Math.max(0, sent.ok - held),
      });
    }
  } finally {
    await postfix.close();
  }
}

async function acceptOurs(
  o: InboundBenchOptions,
  ours: Inbound,
  load: Load,
  what: string,
): Promise<{ row: Row; startedAt: number }> {
  console.error(`bench: inbound: ours, ${load.label} x${load.messages} (${what})`);
  const before = await ours.messages();
  const w = startWindow(ours.pid);
  const cpu0 = cpuSeconds(ours.pid) ?? NaN;
  const startedAt = performance.now();
  const sent = await send(load, ours.mxPort, o.sessions);
  const cpu = (cpuSeconds(ours.pid) ?? NaN) - cpu0;
  const stats = w.end();
  const after = await ours.messages();
  const stored = after.stored + after.processed - before.stored - before.processed;
  return {
    startedAt,
    row: {
      load: load.label,
      side: 'ours',
      what,
      messages: stored,
      rate: sent.ok / (sent.wallMs / 1000),
      p50: sent.p50,
      p99: sent.p99,
      cpuMsPerMessage: (cpu * 1000) / load.messages,
      rssMb: stats.peakRssMb,
      machineCpu: stats.machineCpuPercent,
      errors: sent.failed + Math.max(0, sent.ok - stored),
      vs: load.key,
    },
  };
}

/** Resumes the receive workers on a paused backlog and times them until every stored row is processed. */
async function drain(o: InboundBenchOptions, ours: Inbound, label: string): Promise<Row> {
  const { stored, processed } = await ours.messages();
  console.error(`bench: inbound: receive job, ${stored} messages (${label})`);
  const w = startWindow(ours.pid);
  const cpu0 = cpuSeconds(ours.pid) ?? NaN;
  const t0 = performance.now();
  await ours.resumeReceive();
  const at = await ours.processedBy(processed + stored, o.drainSeconds * 1000);
  const cpu = (cpuSeconds(ours.pid) ?? NaN) - cpu0;
  const stats = w.end();
  await ours.pauseReceive();
  const left = (await ours.messages()).stored;
  return {
    load: label,
    side: 'ours',
    what: 'receive job: processed (backlog)',
    messages: stored - left,
    rate: at === undefined ? undefined : stored / ((at - t0) / 1000),
    cpuMsPerMessage: (cpu * 1000) / stored,
    rssMb: stats.peakRssMb,
    machineCpu: stats.machineCpuPercent,
    errors: left,
  };
}

export async function runInboundBench(o: InboundBenchOptions): Promise<void> {
  const s = o.sessions;
  const small: Load[] = [
    {
      key: '10k-d',
      label: `10 KB, smtp-source -d -s ${s}`,
      bytes: 10_240,
      messages: o.messages,
      client: 'smtp-source',
      reuse: true,
    },
    {
      key: '10k-new',
      label: `10 KB, smtp-source -s ${s} (new conn each)`,
      bytes: 10_240,
      messages: Math.ceil(o.messages / 2),
      client: 'smtp-source',
      reuse: false,
    },
    {
      key: '10k-lat',
      label: `10 KB, nodemailer ${s} lanes (new conn each)`,
      bytes: 10_240,
      messages: o.latencyMessages,
      client: 'nodemailer',
      reuse: false,
    },
  ];
  const big: Load = {
    key: '1m-d',
    label: `1 MB, smtp-source -d -s ${s}`,
    bytes: 1_048_576,
    messages: o.bigMessages,
    client: 'smtp-source',
    reuse: true,
  };
  const rows: Row[] = [];
  const startLoad = loadavg();
  let ours: Inbound | undefined;
  try {
    await postfixSide(o, [...small, big], rows);

    console.error('bench: inbound: starting our inbound process');
    ours = await startInbound({ redisUrl: o.redisUrl, onCleanup: o.onCleanup });
    // Warm-up, not reported: JIT (the first thousand messages cost twice the CPU of the next), the database pool,
    // the receive workers.
    await send({ ...small[0], messages: 1000 }, ours.mxPort, s);
    await send({ ...small[1], messages: 300 }, ours.mxPort, s);
    if ((await ours.processedBy(1300, o.drainSeconds * 1000)) === undefined)
      throw new Error(`warm-up: not processed: ${JSON.stringify(await ours.messages())}`);

    await ours.pauseReceive();
    for (const load of small) rows.push((await acceptOurs(o, ours, load, 'accepted (receive job paused)')).row);
    rows.push(await drain(o, ours, '10 KB, the rows above'));
    rows.push((await acceptOurs(o, ours, big, 'accepted (receive job paused)')).row);
    rows.push(await drain(o, ours, '1 MB, the row above'));

    // As in production: the receive workers run beside the listener in the same process.
    await ours.resumeReceive();
    const before = (await ours.messages()).processed;
    const { row, startedAt } = await acceptOurs(o, ours, small[0], 'accepted, receive job running');
    rows.push(row);
    const at = await ours.processedBy(before + row.messages, o.drainSeconds * 1000);
    rows.push({
      load: small[0].label,
      side: 'ours',
      what: 'processed (1st accept → last processed)',
      messages: (await ours.messages()).processed - before,
      rate: at === undefined ? undefined : row.messages / ((at - startedAt) / 1000),
      errors: row.messages - ((await ours.messages()).processed - before),
    });
  } catch (err) {
    console.error(`bench: inbound: ${(err as Error).stack ?? err}`);
    if (!rows.length) throw err;
    console.log('bench: inbound: stopped early, the rows measured so far:');
  }
  const outcomes = await ours?.outcomes().catch(() => undefined);
  report(rows, `${startLoad} at the start, ${loadavg()} at the end`, outcomes);
}
