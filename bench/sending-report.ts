// The sending suite's table and its two verdicts (bench/sending.ts runs the rows). The suite runs Postfix and our
// side in alternating rounds; each round's ratio compares ours with the Postfix run just before it, and a target
// is judged on the median over the rounds, every round printed: on this machine one Postfix run can be 60 % faster
// than the next, so a single pair would be decided by the moment it ran.
import { cpus } from 'node:os';
import { fixed, renderTable, type Cell } from './table.ts';

/** The issue's targets. */
export const DELIVERED_VS_POSTFIX_TARGET = 0.5;
export const API_P99_TARGET_MS = 50;

export type RowKind =
  | 'ceiling'
  | 'postfix-accepted'
  | 'postfix-delivered'
  | 'api-accepted'
  | 'api-delivered'
  | 'steady'
  | 'steady-mta-stopped'
  | 'smtp-accepted'
  | 'smtp-delivered';

export interface Row {
  kind: RowKind;
  name: string;
  side: 'peer' | 'ours';
  /** The round of a repeated row (1-based); none for the rows run once. */
  round?: number;
  messages: number;
  rate?: number;
  p50?: number;
  p99?: number;
  rss?: string;
  /** CPU of our processes over the row, % of one core. */
  cpu?: string;
  /** CPU time of our processes over the row per message, ms. */
  cpuMs?: string;
  machineCpu?: number;
  errors?: number;
  /** The Postfix rate this row is compared with. */
  vs?: 'accepted' | 'delivered';
  note?: string;
}

export interface ReportContext {
  bytes: number;
  rate: number;
  mtaConcurrency: number;
  maxPerDestination: number;
  load: string;
  recipients?: Record<string, number>;
}

export function median(values: number[]): number | undefined {
  const v = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (!v.length) return undefined;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

const find = (rows: Row[], kind: RowKind, round?: number) => rows.find((r) => r.kind === kind && r.round === round);
const roundsOf = (rows: Row[]) =>
  [...new Set(rows.map((r) => r.round).filter((r): r is number => r !== undefined))].sort((a, b) => a - b);

/** The Postfix rate a row is compared with: its own round's, or for a row run once the median over the rounds. */
function postfixRate(rows: Row[], vs: 'accepted' | 'delivered', round?: number): number | undefined {
  const kind = vs === 'accepted' ? 'postfix-accepted' : 'postfix-delivered';
  if (round !== undefined) return find(rows, kind, round)?.rate;
  return median(rows.filter((r) => r.kind === kind).map((r) => r.rate ?? NaN));
}

const list = (values: (number | undefined)[], digits: number) => values.map((v) => fixed(v, digits)).join(', ');

export function report(rows: Row[], c: ReportContext): void {
  const ratio = (r: Row): Cell => {
    const peer = r.vs && r.rate !== undefined ? postfixRate(rows, r.vs, r.round) : undefined;
    return peer ? fixed(r.rate! / peer, 2) : undefined;
  };
  console.log('');
  console.log(
    `sending: ${c.bytes}-byte messages into one smtp-sink on loopback; node ${process.version}, ${cpus().length} cores; ` +
      `our mta: MTA_CONCURRENCY ${c.mtaConcurrency}, MTA_MAX_PER_DESTINATION ${c.maxPerDestination}, DKIM RSA-2048`,
  );
  console.log('');
  console.log(
    renderTable(
      [
        'measurement',
        'round',
        'side',
        'messages',
        'msgs/s',
        'vs Postfix',
        'p50 ms',
        'p99 ms',
        'peak RSS MB',
        'our CPU %',
        'our CPU ms/msg',
        'machine CPU %',
        'errors',
      ],
      rows.map((r) => [
        r.name,
        r.round,
        r.side,
        r.messages,
        fixed(r.rate, 0),
        ratio(r),
        fixed(r.p50, 1),
        fixed(r.p99, 1),
        r.rss,
        r.cpu,
        r.cpuMs,
        fixed(r.machineCpu, 0),
        `${r.errors ?? '-'}${r.note ? ` (${r.note})` : ''}`,
      ]),
    ),
  );
  console.log('');
  console.log(
    'round: Postfix and our side run in turns, each round Postfix then ours; vs Postfix: accepted rows / Postfix accepted,',
  );
  console.log(
    "delivered rows / Postfix delivered, of the same round (rows run once: the median of the rounds' Postfix). p50/p99: per",
  );
  console.log(
    'request (API at full speed: autocannon, whole ms; API at a steady rate: an open-loop client sending one request every',
  );
  console.log(
    "1/rate s, latency from each request's due time) or per message (SMTP, client-side from MAIL FROM to 250); smtp-source",
  );
  console.log(
    'reports none. Peak RSS: ours per process (VmHWM over the row); Postfix: highest sum of VmRSS over master + children',
  );
  console.log(
    '(shared pages counted in each). our CPU: api / mta process, % of one core; ms/msg: the same as CPU time per message',
  );
  console.log(
    '(accepted rows: over the accepting; delivered rows: from the first accept to the last at the sink). machine CPU: every',
  );
  console.log('process, % of one core. errors: not accepted, or accepted and not at the sink.');
  console.log(`load average (1, 5, 15 min): ${c.load}; above ~2 on this machine, something else competed for the CPU.`);
  if (c.recipients) console.log(`our email_recipients at the end: ${JSON.stringify(c.recipients)}`);
  verdicts(rows, c);
}

function verdicts(rows: Row[], c: ReportContext): void {
  const rounds = roundsOf(rows);
  const pairs = rounds.map((n) => ({
    ours: find(rows, 'api-delivered', n)?.rate,
    postfix: find(rows, 'postfix-delivered', n)?.rate,
  }));
  const ratios = pairs.map((p) => (p.ours !== undefined && p.postfix ? p.ours / p.postfix : undefined));
  const q = median(ratios.map((r) => r ?? NaN));
  if (q === undefined || ratios.includes(undefined)) {
    console.log('FAIL delivered rate vs Postfix: not measured in every round (see the errors above)');
  } else {
    console.log(
      `${q >= DELIVERED_VS_POSTFIX_TARGET ? 'PASS' : 'FAIL'} delivered rate: ours ${q.toFixed(2)} x Postfix's, the median of ${rounds.length} rounds ` +
        `(target >= ${DELIVERED_VS_POSTFIX_TARGET}; rounds: ${list(ratios, 2)}; ours ${list(
          pairs.map((p) => p.ours),
          0,
        )}/s, Postfix ${list(
          pairs.map((p) => p.postfix),
          0,
        )}/s)`,
    );
  }
  const steady = rounds.map((n) => find(rows, 'steady', n));
  const p99 = median(steady.map((r) => r?.p99 ?? NaN));
  const errors = steady.reduce((sum, r) => sum + (r?.errors ?? 0), 0);
  if (p99 === undefined || steady.some((r) => r?.p99 === undefined)) {
    console.log(`FAIL API p99 at ${c.rate} sends/s: not measured in every round`);
  } else {
    const ok = p99 < API_P99_TARGET_MS && errors === 0;
    console.log(
      `${ok ? 'PASS' : 'FAIL'} API p99 at ${c.rate} sends/s: ${p99.toFixed(0)} ms, the median of ${rounds.length} rounds (target < ${API_P99_TARGET_MS} ms; ` +
        `rounds: ${list(
          steady.map((r) => r?.p99),
          0,
        )} ms)${errors ? `, ${errors} errors` : ''}`,
    );
    const slow = steady.filter((r) => r?.rate !== undefined && r.rate < c.rate * 0.95).length;
    if (slow)
      console.log(
        `  (the api did not keep up in ${slow} round(s): requests queued and the latencies include the wait)`,
      );
  }
  const alone = find(rows, 'steady-mta-stopped');
  if (alone?.p99 !== undefined)
    console.log(`  (with the mta stopped meanwhile, the accept path alone: p99 ${alone.p99.toFixed(0)} ms)`);
}
