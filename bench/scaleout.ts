// The scale-out suite of `npm run bench` (BENCH_ONLY=scaleout; bench/README.md, "The scale-out suite"): our api and
// mta as in the sending suite (bench/sending-ours.ts), with one mta copy and then two (the second as systemd's
// postwerk-mta@2 runs it: the same configuration, listeners of its own), 10 KB messages into one loopback smtp-sink.
// Per copy count and round: delivered after the API (accepting and delivering overlap) and a backlog drained (the
// accepts made with every mta stopped, then the mtas let go), with CPU per message of the api, the mtas (summed)
// and PostgreSQL (the backends of our database), and PostgreSQL's transactions and row writes per message
// (pg_stat_database of our database).
import { performance } from 'node:perf_hooks';
import { cpuOf, cpuOfAll } from './proc.ts';
import { configSchema } from '../shared/config.ts';
import { fixed, renderTable } from './table.ts';
import { spawnMta, type MtaProcess as Mta } from './servers.ts';
import { freePort, startSink, type Sink } from './sending-peers.ts';
import { apiAccept, startOurs, type Ours } from './sending-ours.ts';

export interface ScaleoutBenchOptions {
  messages: number;
  sessions: number;
  bytes: number;
  drainSeconds: number;
  mtaConcurrency: number;
  maxPerDestination: number;
  rounds: number;
  redisUrl: string;
  onCleanup(step: () => Promise<unknown>): void;
}

/** The suite's settings from the environment (those of the sending suite, and BENCH_SCALEOUT_ROUNDS). */
export function scaleoutOptions(
  envNumber: (name: string, fallback: number, min: number) => number,
  redisUrl: string,
  undo: (() => Promise<unknown>)[],
): ScaleoutBenchOptions {
  return {
    redisUrl,
    onCleanup: (step) => undo.push(step),
    messages: envNumber('BENCH_SEND_MESSAGES', 2000, 1),
    sessions: envNumber('BENCH_SEND_SESSIONS', 20, 1),
    bytes: envNumber('BENCH_SEND_BYTES', 10240, 1),
    drainSeconds: envNumber('BENCH_SEND_DRAIN_SECONDS', 120, 1),
    mtaConcurrency: envNumber('BENCH_MTA_CONCURRENCY', configSchema.shape.MTA_CONCURRENCY.parse(undefined), 1),
    maxPerDestination: envNumber('BENCH_MTA_MAX_PER_DESTINATION', 20, 1),
    rounds: envNumber('BENCH_SCALEOUT_ROUNDS', 2, 1),
  };
}

interface Row {
  name: string;
  copies: number;
  round: number;
  messages: number;
  rate?: number;
  api: number;
  mta: number;
  postgres: number;
  commits: number;
  writes: number;
  errors: number;
}

/** A further mta copy on `ours`'s configuration: submission and metrics listeners of its own (postwerk-mta@N). */
async function startMtaCopy(ours: Ours, o: ScaleoutBenchOptions): Promise<Mta> {
  const submission = await freePort();
  const env = {
    ...ours.env,
    SMTP_SUBMISSION_PORT: String(submission),
    SMTP_SUBMISSION_TLS_PORT: String(await freePort()),
  };
  return spawnMta(env, submission, o.onCleanup);
}

/** Transactions committed and rows written (inserted + updated + deleted) in our database so far. */
async function pgCounters(ours: Ours, database: string): Promise<{ commits: number; writes: number }> {
  const r = await ours.db.raw(
    `select xact_commit, tup_inserted + tup_updated + tup_deleted as writes from pg_stat_database where datname = ?`,
    [database],
  );
  return { commits: Number(r.rows[0].xact_commit), writes: Number(r.rows[0].writes) };
}

/** A run of `n` API sends, watched until the sink has them; with `backlog`, every mta is stopped while they go in. */
async function run(
  o: ScaleoutBenchOptions,
  ours: Ours,
  sink: Sink,
  mtas: Mta[],
  backlog: boolean,
): Promise<Omit<Row, 'name' | 'copies' | 'round'>> {
  const database = new URL(ours.databaseUrl).pathname.slice(1);
  const snapshot = async () => ({
    api: cpuOf(ours.api.pid),
    mta: mtas.reduce((s, m) => s + cpuOf(m.pid), 0),
    postgres: cpuOfAll(/^postgres/, ` ${database} `),
    pg: await pgCounters(ours, database),
  });
  const base = sink.count();
  const a = await snapshot();
  if (backlog) for (const m of mtas) process.kill(m.pid, 'SIGSTOP');
  let r;
  try {
    r = await apiAccept(ours, o.messages, o.sessions, o.bytes);
  } finally {
    if (backlog) for (const m of mtas) process.kill(m.pid, 'SIGCONT');
  }
  const released = performance.now();
  const at = await sink.waitFor(base + r.ok, o.drainSeconds * 1000);
  // The sink counts a message at its final "."; the mta records it just after, and PostgreSQL's statistics follow.
  await new Promise((res) => setTimeout(res, 1500));
  const b = await snapshot();
  const seen = sink.count() - base;
  const per = (x: number) => (x * 1000) / Math.max(1, r.ok);
  return {
    messages: seen,
    rate: at === undefined ? undefined : seen / ((at - (backlog ? released : r.startedAt)) / 1000),
    api: per(b.api - a.api),
    mta: per(b.mta - a.mta),
    postgres: per(b.postgres - a.postgres),
    commits: (b.pg.commits - a.pg.commits) / Math.max(1, r.ok),
    writes: (b.pg.writes - a.pg.writes) / Math.max(1, r.ok),
    errors: r.failed + (r.ok - seen),
  };
}

async function rowsFor(o: ScaleoutBenchOptions, ours: Ours, sink: Sink, mtas: Mta[]): Promise<Row[]> {
  const rows: Row[] = [];
  const copies = mtas.length;
  for (let round = 1; round <= o.rounds; round++) {
    console.error(`bench: scaleout: ${copies} mta: round ${round}: POST /emails x${o.messages}, delivered behind`);
    rows.push({
      name: 'delivered after API (1st accept → last at sink)',
      copies,
      round,
      ...(await run(o, ours, sink, mtas, false)),
    });
    console.error(`bench: scaleout: ${copies} mta: round ${round}: a backlog of ${o.messages}, then drained`);
    rows.push({
      name: 'backlog drained (mtas let go → last at sink)',
      copies,
      round,
      ...(await run(o, ours, sink, mtas, true)),
    });
  }
  return rows;
}

function print(rows: Row[], o: ScaleoutBenchOptions, recipients: Record<string, number>): void {
  console.log(
    `\nScale-out: one and two mta copies, ${o.messages} messages of ${o.bytes} bytes per run through the API ` +
      `(${o.sessions} connections), MTA_CONCURRENCY ${o.mtaConcurrency} per copy, into one smtp-sink\n`,
  );
  console.log(
    renderTable(
      [
        'row',
        'mta copies',
        'round',
        'msgs/s',
        'CPU ms/msg api / mta / pg',
        'pg xacts/msg',
        'pg rows written/msg',
        'errors',
      ],
      rows.map((r) => [
        r.name,
        r.copies,
        r.round,
        fixed(r.rate, 0),
        `${fixed(r.api, 2)} / ${fixed(r.mta, 2)} / ${fixed(r.postgres, 2)}`,
        fixed(r.commits, 1),
        fixed(r.writes, 1),
        r.errors,
      ]),
    ),
  );
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const name of new Set(rows.map((r) => r.name))) {
    const of = (copies: number) =>
      median(rows.filter((r) => r.name === name && r.copies === copies).map((r) => r.rate ?? NaN));
    console.log(
      `${name}: median ${fixed(of(1), 0)}/s with one mta, ${fixed(of(2), 0)}/s with two (x${fixed(of(2) / of(1), 2)})`,
    );
  }
  console.log(`recipients: ${JSON.stringify(recipients)}`);
  console.log('pg: the backends of our database (WAL writer, checkpointer and other databases not counted).');
}

/** Runs the suite and prints its table; false (and the error on stderr) when it could not run. */
export async function runScaleoutBench(o: ScaleoutBenchOptions): Promise<boolean> {
  try {
    await runScaleout(o);
    return true;
  } catch (err) {
    console.error(`bench: scaleout: ${(err as Error).stack ?? err}`);
    return false;
  }
}

async function runScaleout(o: ScaleoutBenchOptions): Promise<void> {
  const sink = await startSink();
  o.onCleanup(() => sink.close());
  console.error('bench: scaleout: starting our api and mta');
  const ours = await startOurs({
    sinkPort: sink.port,
    redisUrl: o.redisUrl,
    mtaConcurrency: o.mtaConcurrency,
    maxPerDestination: o.maxPerDestination,
    onCleanup: o.onCleanup,
  });
  // Warm-up (JIT, pools, signing threads), not reported.
  const warm = async (n: number) => {
    const base = sink.count();
    const r = await apiAccept(ours, n, o.sessions, o.bytes);
    await sink.waitFor(base + r.ok, o.drainSeconds * 1000);
  };
  console.error('bench: scaleout: warm-up');
  await warm(1000);
  const rows = await rowsFor(o, ours, sink, [ours.mta]);
  console.error('bench: scaleout: starting a second mta copy');
  const second = await startMtaCopy(ours, o);
  await warm(500);
  rows.push(...(await rowsFor(o, ours, sink, [ours.mta, second])));
  print(rows, o, await ours.recipients());
}
