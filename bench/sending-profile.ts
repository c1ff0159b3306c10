// CPU per message, per process, for our side of the sending suite (bench/README.md, "The sending suite"): a
// fixed batch through the API and one through SMTP submission, each until the sink has every message, with the
// CPU time (user + system, every thread, from /proc) each process used over the batch divided by the messages.
// Wall-clock rates on a shared machine are noise; CPU per message is what a change moves.
//
//   npx tsx bench/sending-profile.ts                 # 1000 messages each way
//   PROFILE_MESSAGES=500 PROFILE_CPU_PROF=/tmp/prof npx tsx bench/sending-profile.ts
//   PROFILE_WAYS=API npx tsx bench/sending-profile.ts   # only one way (API or SMTP)
//   PROFILE_MTA_NICE=0 ...                           # the mta at another priority than MTA_NICE's default
//   PROFILE_RATE=200 PROFILE_WAYS=API ...            # the API way at a steady rate (the suite's open loop)
//
// Besides CPU: context switches, read/write syscalls (/proc/<pid>/io) of the api and mta, and PostgreSQL's
// transactions and rows written, each per message, the rows also by table (inserted, updated, of them HOT, deleted).
//
// PROFILE_CPU_PROF=<dir> profiles the api and mta (a .cpuprofile each, written when they stop, for Chrome's
// DevTools or `npx tsx bench/cpuprofile-top.ts`): NODE_OPTIONS refuses --cpu-prof, so a preloaded module runs
// the inspector's profiler instead.
import './env.ts'; // first: the configuration, before any helper reads it
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startSink } from './sending-peers.ts';
import { configSchema } from '../shared/config.ts';
import { cpuOf, cpuOfAll, switchesOf, syscallsOf } from './proc.ts';

type Syscalls = ReturnType<typeof syscallsOf>;
import { apiAccept, apiPaced, smtpAccept, startOurs } from './sending-ours.ts';

const messages = Number(process.env.PROFILE_MESSAGES ?? 1000);
const sessions = Number(process.env.PROFILE_SESSIONS ?? 20);
const bytes = 10240;
// PROFILE_RATE: the API way sent at this steady rate (apiPaced, the sending suite's steady row), not full speed.
const rate = Number(process.env.PROFILE_RATE ?? 0);
// PROFILE_PG_STATEMENTS=1: the statements per message from pg_stat_statements (the server must preload it).
const pgss = process.env.PROFILE_PG_STATEMENTS === '1';

const undo: (() => Promise<unknown>)[] = [];
const cleanup = async () => {
  for (const step of undo.reverse()) await step().catch(() => undefined);
};
process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));

try {
  const sink = await startSink();
  undo.push(() => sink.close());
  const dir = process.env.PROFILE_CPU_PROF;
  let env: Record<string, string> | undefined;
  if (dir) {
    const hook = path.join(dir, 'profile-hook.mjs');
    writeFileSync(
      hook,
      [
        "import { Session } from 'node:inspector';",
        "import { writeFileSync } from 'node:fs';",
        'const s = new Session(); s.connect();',
        "s.post('Profiler.enable'); s.post('Profiler.setSamplingInterval', { interval: 200 }); s.post('Profiler.start');",
        "process.on('exit', () => s.post('Profiler.stop', (err, r) => { if (!err) writeFileSync(" +
          `${JSON.stringify(dir)} + '/' + process.argv[1].split('/').slice(-2).join('-') + '-' + process.pid + '.cpuprofile', JSON.stringify(r.profile)); }));`,
      ].join('\n'),
    );
    env = { NODE_OPTIONS: `--import=${hook}` };
  }
  const ours = await startOurs({
    sinkPort: sink.port,
    redisUrl: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    mtaConcurrency: Number(process.env.PROFILE_MTA_CONCURRENCY ?? configSchema.shape.MTA_CONCURRENCY.parse(undefined)),
    maxPerDestination: 20,
    onCleanup: (s) => undo.push(s),
    // PROFILE_MTA_NICE: the mta's own priority for an experiment (its default is MTA_NICE's).
    extraEnv: { ...env, ...(process.env.PROFILE_MTA_NICE ? { MTA_NICE: process.env.PROFILE_MTA_NICE } : {}) },
  });
  const base0 = sink.count();
  await apiAccept(ours, 100, sessions, bytes);
  await smtpAccept(ours, 40, sessions, bytes);
  await sink.waitFor(base0 + 140, 60_000);

  const database = new URL(ours.databaseUrl).pathname.slice(1);
  if (pgss) await ours.db.raw('create extension if not exists pg_stat_statements');
  // Transactions committed and rows written in our database (pg_stat_database: PostgreSQL's own counts).
  const pgCounts = async () => {
    const r = await ours.db.raw(
      `select xact_commit, tup_inserted + tup_updated + tup_deleted as writes from pg_stat_database where datname = ?`,
      [database],
    );
    return { xacts: Number(r.rows[0].xact_commit), writes: Number(r.rows[0].writes) };
  };
  // The same rows by table and kind (pg_stat_user_tables), to name what a message writes.
  const tableCounts = async () => {
    const r = await ours.db.raw(
      `select relname, n_tup_ins as ins, n_tup_upd as upd, n_tup_hot_upd as hot, n_tup_del as del from pg_stat_user_tables`,
    );
    return new Map(
      (r.rows as { relname: string; ins: string; upd: string; hot: string; del: string }[]).map((t) => [
        t.relname,
        { ins: Number(t.ins), upd: Number(t.upd), hot: Number(t.hot), del: Number(t.del) },
      ]),
    );
  };
  /** Per message, each table with writes between the two counts: inserted / updated (of them HOT) / deleted. */
  const tableLine = (a: Awaited<ReturnType<typeof tableCounts>>, b: typeof a, n: number) =>
    [...b]
      .map(([name, y]) => {
        const x = a.get(name) ?? { ins: 0, upd: 0, hot: 0, del: 0 };
        return {
          name,
          ins: (y.ins - x.ins) / n,
          upd: (y.upd - x.upd) / n,
          hot: (y.hot - x.hot) / n,
          del: (y.del - x.del) / n,
        };
      })
      .filter((t) => t.ins + t.upd + t.del >= 0.01)
      .sort((p, q) => q.ins + q.upd + q.del - (p.ins + p.upd + p.del))
      .map((t) => `${t.name} ${t.ins.toFixed(2)}/${t.upd.toFixed(2)} (${t.hot.toFixed(2)} HOT)/${t.del.toFixed(2)}`)
      .join(', ');
  const snapshot = () => ({
    api: cpuOf(ours.api.pid),
    mta: cpuOf(ours.mta.pid),
    postgres: cpuOfAll(/^postgres/, ` ${database} `),
    redis: cpuOfAll(/^redis-server/),
    sink: cpuOf(sink.pid),
    client: process.cpuUsage(),
    at: performance.now(),
    switches: { api: switchesOf(ours.api.pid), mta: switchesOf(ours.mta.pid) },
    syscalls: { api: syscallsOf(ours.api.pid), mta: syscallsOf(ours.mta.pid) },
  });
  const rows: string[] = [];
  const ways = (process.env.PROFILE_WAYS ?? 'API,SMTP').split(',');
  for (const [label, go] of [
    ['API', () => (rate > 0 ? apiPaced(ours, messages, rate, bytes) : apiAccept(ours, messages, sessions, bytes))],
    ['SMTP', () => smtpAccept(ours, messages, sessions, bytes)],
  ] as const) {
    if (!ways.includes(label)) continue;
    const base = sink.count();
    if (pgss) await ours.db.raw('select pg_stat_statements_reset()');
    const pgA = await pgCounts();
    const tablesA = await tableCounts();
    const a = snapshot();
    const r = await go();
    await sink.waitFor(base + r.ok, 300_000);
    const b = snapshot();
    // The mta records each delivery just after the sink's 250, and the statistics follow within a second.
    await new Promise((res) => setTimeout(res, 1500));
    const pgB = await pgCounts();
    const tablesB = await tableCounts();
    const per = (x: number) => ((x * 1000) / r.ok).toFixed(2);
    const calls = (x: Syscalls, y: Syscalls) =>
      `${((y.reads - x.reads) / r.ok).toFixed(1)}/${((y.writes - x.writes) / r.ok).toFixed(1)}`;
    const client = (b.client.user + b.client.system - a.client.user - a.client.system) / 1e6;
    const wall = (b.at - a.at) / 1000;
    rows.push(
      `${label.padEnd(5)} n=${r.ok} accept ${r.rate.toFixed(0)}/s p50 ${r.p50.toFixed(0)} p99 ${r.p99.toFixed(0)} delivered ${(r.ok / wall).toFixed(0)}/s | ms CPU/msg: ` +
        `api ${per(b.api - a.api)} mta ${per(b.mta - a.mta)} postgres ${per(b.postgres - a.postgres)} redis* ${per(b.redis - a.redis)} ` +
        `sink ${per(b.sink - a.sink)} client ${per(client)} | total ${per(b.api - a.api + b.mta - a.mta + b.postgres - a.postgres + b.redis - a.redis)} (ours+pg+redis) | context switches/msg: api ${((b.switches.api - a.switches.api) / r.ok).toFixed(1)} mta ${((b.switches.mta - a.switches.mta) / r.ok).toFixed(1)}` +
        ` | pg/msg: ${((pgB.xacts - pgA.xacts) / r.ok).toFixed(2)} transactions, ${((pgB.writes - pgA.writes) / r.ok).toFixed(2)} rows written` +
        ` | read/write syscalls/msg: api ${calls(a.syscalls.api, b.syscalls.api)} mta ${calls(a.syscalls.mta, b.syscalls.mta)}`,
      `  rows a message by table, inserted/updated (HOT)/deleted: ${tableLine(tablesA, tablesB, r.ok)}`,
    );
    if (pgss) {
      // Which statements our database ran per message, and their execution time (PostgreSQL's own measure).
      const top = await ours.db.raw(
        `select calls, total_exec_time, rows, regexp_replace(query, '\\s+', ' ', 'g') as query from pg_stat_statements
        where dbid = (select oid from pg_database where datname = ?) order by total_exec_time desc limit 25`,
        [database],
      );
      for (const s of top.rows as { calls: string; total_exec_time: number; rows: string; query: string }[]) {
        rows.push(
          `  ${(Number(s.calls) / r.ok).toFixed(2).padStart(6)} calls/msg ${((s.total_exec_time * 1000) / r.ok).toFixed(0).padStart(5)} µs/msg  ${s.query.slice(0, 140)}`,
        );
      }
    }
  }
  console.log(rows.join('\n'));
  console.log(
    'postgres: the backends of our database (WAL writer and checkpointer not counted); redis*: the whole server, other users included.',
  );
  console.log(`recipients: ${JSON.stringify(await ours.recipients())}`);
} finally {
  await cleanup();
}
