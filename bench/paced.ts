// Open-loop pacing, shared by the benches' steady loads (POST /emails in bench/sending-ours.ts, the tracking hits in
// bench/tracking-hits.ts): request i is due at start + i/rate whatever the earlier ones are doing, and its latency
// counts from when it was due, so a stalled client or server is not hidden (no coordinated omission). autocannon's
// `overallRate` is not this: it lets each connection send its share of a second back to back at the start of the
// second, a burst at full concurrency every second.

export interface PacedRun {
  /** Latencies (ms from each request's due time) of the requests `fire` answered true for, sorted. */
  ms: number[];
  /** How late the client itself sent each request (ms after it was due), sorted: its own scheduling. */
  late: number[];
  /** Each answered request's due time (performance.now()) and latency, in the order they were due. */
  spans: { due: number; ms: number }[];
  failed: number;
  startedAt: number;
  wallMs: number;
}

/** `n` requests at `rate` per second; `fire(i)` sends the i-th and answers whether it succeeded. */
export async function paced(n: number, rate: number, fire: (i: number) => Promise<boolean>): Promise<PacedRun> {
  const ms: number[] = [];
  const late: number[] = [];
  const spans: { due: number; ms: number }[] = [];
  let failed = 0;
  const all: Promise<void>[] = [];
  const startedAt = performance.now();
  for (let i = 0; i < n; i++) {
    const due = startedAt + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    late.push(performance.now() - due);
    all.push(
      fire(i).then((ok) => {
        if (!ok) return void failed++;
        const took = performance.now() - due;
        ms.push(took);
        spans.push({ due, ms: took });
      }),
    );
  }
  await Promise.all(all);
  const wallMs = performance.now() - startedAt;
  ms.sort((a, b) => a - b);
  late.sort((a, b) => a - b);
  spans.sort((a, b) => a.due - b.due);
  return { ms, late, spans, failed, startedAt, wallMs };
}

/** The p-th percentile of sorted values (nearest rank); NaN when there are none. */
export function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;
}
