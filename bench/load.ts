// One benchmark target: a checked request, a warm-up run whose numbers are dropped (JIT, connection pools,
// caches), the measured run with the server's RSS and CPU read around it, and a checked request again. Every
// response status of both runs is tallied, so a run that "went fast" because it was answered 429 or 500 cannot
// pass unnoticed.
import autocannon from 'autocannon';
import type { ChildServer } from './servers.ts';
import { startWindow } from './proc.ts';

export const USER_AGENT = 'postwerk-bench/1.0';

export interface Target {
  name: string;
  server: ChildServer;
  path: string;
  headers?: Record<string, string>;
  /** The one status every response must have. */
  expectStatus: number;
  /** Checks the body of the single request made before the load; answers what is wrong, or nothing. */
  checkBody(body: unknown): string | undefined;
  /** True when answering needs neither PostgreSQL nor Redis: then only the server and autocannon should be busy. */
  alone: boolean;
}

export interface LoadOptions {
  connections: number;
  warmupSeconds: number;
  seconds: number;
}

export interface Measurement {
  name: string;
  alone: boolean;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  peakRssMb?: number;
  serverCpuPercent?: number;
  clientCpuPercent: number;
  machineCpuPercent?: number;
  /** Responses (warm-up included) whose status was not the expected one, by status. */
  unexpected: Record<string, number>;
  /** Socket errors and timeouts (warm-up included): requests that got no response at all. */
  errors: number;
  /** What was wrong with the checked request made after the load, if anything. */
  afterCheck?: string;
}

function unexpectedStatuses(results: autocannon.Result[], expected: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results) {
    for (const [status, { count }] of Object.entries(r.statusCodeStats)) {
      if (Number(status) !== expected) out[status] = (out[status] ?? 0) + count;
    }
  }
  return out;
}

/** Makes one request and answers what is wrong with it, or nothing. */
async function checkOnce(t: Target): Promise<string | undefined> {
  const res = await fetch(t.server.url + t.path, { headers: { 'user-agent': USER_AGENT, ...t.headers } });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  const problem =
    res.status !== t.expectStatus ? `status ${res.status}, expected ${t.expectStatus}` : t.checkBody(body);
  return problem && `${problem}: ${text.slice(0, 300)}`;
}

export async function measure(t: Target, o: LoadOptions): Promise<Measurement> {
  // Before the load a wrong answer is a setup mistake, and loading the server would measure nothing.
  const before = await checkOnce(t);
  if (before) throw new Error(`${t.name}: the request before the load failed (${before})`);
  const run = (seconds: number) =>
    autocannon({
      url: t.server.url + t.path,
      connections: o.connections,
      duration: seconds,
      headers: { 'user-agent': USER_AGENT, ...t.headers },
    });
  const warmup = o.warmupSeconds > 0 ? [await run(o.warmupSeconds)] : [];

  const window = startWindow(t.server.pid);
  const clientCpu = process.cpuUsage();
  const clientWall = performance.now();
  const result = await run(o.seconds);
  const server = window.end();
  const used = process.cpuUsage(clientCpu);
  const clientCpuPercent = ((used.user + used.system) / 1000 / (performance.now() - clientWall)) * 100;
  // autocannon drops its sockets when time is up, but the server still finishes the requests it had taken
  // (waiting for a database connection, say). One more checked request queues behind them, so it both shows
  // the server is still sound after the load and lets that leftover work end before the next target starts.
  const afterCheck = await checkOnce(t);

  return {
    name: t.name,
    alone: t.alone,
    requests: result.requests.total,
    // Completed requests over the run's length, rather than the mean of per-second samples, so a short run's
    // partial last second does not skew it.
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    peakRssMb: server.peakRssMb,
    serverCpuPercent: server.cpuPercent,
    clientCpuPercent,
    machineCpuPercent: server.machineCpuPercent,
    unexpected: unexpectedStatuses([...warmup, result], t.expectStatus),
    errors: [...warmup, result].reduce((n, r) => n + r.errors, 0),
    afterCheck,
  };
}
