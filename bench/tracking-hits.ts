// The hit generator of the tracking suite, as a process of its own (bench/tracking-load.ts starts it): hits at a
// steady rate against the tracking listener, real recipients' paths in turn (a file of one path a line). Its own
// event loop: the open-loop POST /emails client of the bench process is not slowed by 2,000 requests a second beside
// it. Prints one JSON line (HitResult).
//
// Open loop (bench/paced.ts, as the sending suite's steady row): hit i is due at start + i/rate
// whatever the earlier ones are doing, and its latency counts from when it was due, so neither a stalled listener nor
// a stalled generator is hidden. autocannon's `overallRate` was used here until 2026-11-29: it lets each of its
// connections send its share of a second back to back at the start of the second, so the listener met its 50
// connections' full concurrency for the first part of every second and idled for the rest, and the p99 measured
// that burst's queue rather than a steady 2,000 a second. `lateP99` says how late the generator itself sent (its
// own CPU share at nice 19): a large one means the figure is the generator's, not the listener's.
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { lowerPriority } from '../shared/priority.ts';
import { paced, percentile } from './paced.ts';

// The generator stands for browsers on other machines: at nice 19 it takes only the CPU the platform leaves, so the
// suite measures what the hits cost the api and PostgreSQL rather than the generator's own share beside them.
lowerPriority(19);

export interface HitResult {
  sent: number;
  /** Answered 200 or 302. */
  ok: number;
  /** Answered anything else, or not at all. */
  bad: number;
  seconds: number;
  p50: number;
  p99: number;
  max: number;
  /** How late the generator sent its hits (ms after they were due), p99: its own scheduling, not the listener's. */
  lateP99: number;
  /** Hits sent before the measured ones (answered and recorded as any other). */
  warmup: number;
}

const CONNECTIONS = 50;
/**
 * Seconds of hits at the rate before the measured ones. Without them the first second's hits were most of the tail:
 * 1,520 of 2,000 over 50 ms in one run, and none after (the connections opening, this process's code compiled at nice
 * 19 on a busy machine): the p99 of a 10 s run was its start, not the listener's steady state.
 */
const WARM_SECONDS = 2;

async function run(argv: string[]): Promise<HitResult> {
  const [port, host, pathsFile, rateArg, secondsArg, userAgent] = argv;
  const rate = Number(rateArg);
  const n = Math.round(rate * Number(secondsArg));
  const paths = readFileSync(pathsFile, 'utf8').split('\n').filter(Boolean);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const hit = (path: string) =>
    new Promise<number>((resolve) => {
      const req = http.request(
        { agent, host: '127.0.0.1', port, path, headers: { host, 'user-agent': userAgent }, timeout: 10_000 },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(0));
      req.end();
    });
  const fire = async (i: number) => {
    const status = await hit(paths[i % paths.length]);
    return status === 200 || status === 302;
  };
  // The same stream first, unmeasured: the connections opened, this process's and the listener's code compiled.
  const warmup = Math.round(rate * WARM_SECONDS);
  await paced(warmup, rate, fire);
  process.stdout.write('warm\n');
  const { ms, late, failed, wallMs } = await paced(n, rate, fire);
  agent.destroy();
  return {
    sent: n,
    ok: ms.length,
    bad: failed,
    seconds: wallMs / 1000,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    max: ms[ms.length - 1] ?? NaN,
    lateP99: percentile(late, 99),
    warmup,
  };
}

process.stdout.write(`${JSON.stringify(await run(process.argv.slice(2)))}\n`);
