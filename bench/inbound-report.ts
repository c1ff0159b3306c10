// The inbound suite's table and its verdicts (bench/inbound.ts runs the rows): each of our accepting rows against
// the Postfix row of the same load, the target judged per smtp-source load; it does not change the exit status.
import { cpus } from 'node:os';
import { fixed, renderTable, type Cell } from './table.ts';

/** The target: our acceptance rate at least half of Postfix's. */
export const ACCEPT_VS_POSTFIX_TARGET = 0.5;

export interface Row {
  load: string;
  side: 'Postfix' | 'ours';
  what: string;
  messages: number;
  rate?: number;
  p50?: number;
  p99?: number;
  cpuMsPerMessage?: number;
  rssMb?: number;
  machineCpu?: number;
  errors: number;
  /** The load key whose Postfix row this row is compared with. */
  vs?: string;
}

export function report(rows: Row[], load: string, outcomes: Record<string, number> | undefined): void {
  const postfixRow = (label: string) => rows.find((r) => r.side === 'Postfix' && r.load === label);
  const vsRow = (r: Row) => (r.vs ? postfixRow(r.load) : undefined);
  const ratio = (r: Row): Cell => {
    const p = vsRow(r);
    return p?.rate && r.rate !== undefined ? fixed(r.rate / p.rate, 2) : undefined;
  };
  console.log('');
  console.log(
    `inbound: smtp-source and nodemailer into Postfix 3.7 (every message held in its queue) and into our MX (inbound/main.ts, ` +
      `its receive workers paused unless said), loopback, no TLS; node ${process.version}, ${cpus().length} cores`,
  );
  console.log('');
  console.log(
    renderTable(
      [
        'load',
        'side',
        'measurement',
        'messages',
        'msgs/s',
        'vs Postfix',
        'p50 ms',
        'p99 ms',
        'CPU ms/msg',
        'peak RSS MB',
        'machine CPU %',
        'errors',
      ],
      rows.map((r) => [
        r.load,
        r.side,
        r.what,
        r.messages,
        fixed(r.rate, 0),
        ratio(r),
        fixed(r.p50, 1),
        fixed(r.p99, 1),
        fixed(r.cpuMsPerMessage, 2),
        fixed(r.rssMb, 0),
        fixed(r.machineCpu, 0),
        r.errors,
      ]),
    ),
  );
  console.log('');
  console.log(
    "msgs/s: messages / the client's wall time (smtp-source or nodemailer). p50/p99: nodemailer rows only, connect to 250",
  );
  console.log(
    "per message. CPU ms/msg: CPU time (user + system) of our inbound process, or of Postfix's master and every child",
  );
  console.log(
    '(smtpd, cleanup, trivial-rewrite, ...) per message; PostgreSQL, Redis and the client are not counted. Peak RSS: ours',
  );
  console.log(
    'VmHWM of the inbound process over the row; Postfix the highest sum of VmRSS over its processes. machine CPU: every',
  );
  console.log(
    'process, % of one core. Durability: both fsync before 250 (Postfix its queue file; ours the commit of the row with its',
  );
  console.log("raw bytes up to 512 KB, and a larger message's blob before it).");
  console.log(`load average (1, 5, 15 min): ${load}; above ~2 on this machine, something else competed for the CPU.`);
  if (outcomes) console.log(`our received emails at the end, by dropped_reason: ${JSON.stringify(outcomes)}`);
  for (const r of rows) {
    const p = vsRow(r);
    if (!p || r.load.includes('nodemailer')) continue;
    if (r.rate === undefined || p.rate === undefined || r.errors) {
      console.log(`FAIL accept rate, ${r.load}, ${r.what}: not measured cleanly (${r.errors} errors)`);
      continue;
    }
    const q = r.rate / p.rate;
    const cpu =
      r.cpuMsPerMessage !== undefined && p.cpuMsPerMessage !== undefined
        ? `; CPU per message ours ${r.cpuMsPerMessage.toFixed(2)} ms, Postfix ${p.cpuMsPerMessage.toFixed(2)} ms`
        : '';
    console.log(
      `${q >= ACCEPT_VS_POSTFIX_TARGET ? 'PASS' : 'FAIL'} accept rate, ${r.load}, ${r.what}: ours ${r.rate.toFixed(0)}/s = ${q.toFixed(2)} x ` +
        `Postfix's ${p.rate.toFixed(0)}/s (target >= ${ACCEPT_VS_POSTFIX_TARGET})${cpu}`,
    );
  }
}
