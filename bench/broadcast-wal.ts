// `npx tsx bench/broadcast-wal.ts`: what PostgreSQL writes for one broadcast message. A broadcast to
// BENCH_WAL_SIZE contacts (10,000 by default) through the real api, worker and mta (bench/broadcasts.ts's setup)
// into Postfix's smtp-sink; over the broadcast, from send to the last message at the sink: the WAL written per
// message, split by table or index and record type (pg_waldump over the broadcast's LSN range, so it needs the
// server's pg_wal readable, as root on the machine that runs PostgreSQL), PostgreSQL's CPU per message (every
// `postgres` process, bench/proc.ts), and the latency of a one-row autocommitted INSERT at 100/s beside it against the
// same before it (BENCH_WAL_PROBE_ASYNC=1: with synchronous_commit off, which leaves the CPU's share of the wait).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { startSink } from './sending-peers.ts';
import { startOurs } from './sending-ours.ts';
import { seed, send, startWorker } from './broadcasts.ts';
import { paced, percentile } from './paced.ts';
import { fixed, renderTable } from './table.ts';
import { cpuOfAll } from './proc.ts';

const SIZE = Number(process.env.BENCH_WAL_SIZE ?? 10_000);
const WALDUMP = '/usr/lib/postgresql/15/bin/pg_waldump';

/** A one-row INSERT at 100/s on a connection of its own until stop(); answers each one's latency (ms). */
async function commitProbe(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('create table if not exists bench_commit_probe (x int)');
  if (process.env.BENCH_WAL_PROBE_ASYNC === '1') await client.query('set synchronous_commit = off');
  return async (seconds: number) => {
    const r = await paced(100 * seconds, 100, async () => {
      await client.query('insert into bench_commit_probe values (1)');
      return true;
    });
    return r.ms;
  };
}

/** WAL bytes and records over [from, to) by relation and record type, from pg_waldump's per-record lines. */
function walByRelation(dir: string, from: string, to: string, names: Map<string, string>, dbOid: string) {
  const out = execFileSync(WALDUMP, ['-p', dir, '-s', from, '-e', to], { maxBuffer: 1 << 30 }).toString();
  const by = new Map<string, { records: number; bytes: number }>();
  for (const line of out.split('\n')) {
    const m = /rmgr: (\S+)\s+len \(rec\/tot\):\s+\d+\/\s*(\d+).*?desc: (\S+)(.*)$/.exec(line);
    if (!m) continue;
    const rel = /rel \d+\/(\d+)\/(\d+)/.exec(m[4]);
    const name = rel ? (rel[1] === dbOid ? (names.get(rel[2]) ?? 'other') : 'other database') : '(no relation)';
    const key = `${name}|${m[1]} ${m[3].replace(/\+INIT$/, '')}`;
    const e = by.get(key) ?? { records: 0, bytes: 0 };
    e.records++;
    e.bytes += Number(m[2]);
    by.set(key, e);
  }
  return by;
}

const cleanups: (() => Promise<unknown>)[] = [];
const onCleanup = (step: () => Promise<unknown>) => void cleanups.unshift(step);
try {
  const sink = await startSink();
  onCleanup(() => sink.close());
  const ours = await startOurs({
    sinkPort: sink.port,
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    mtaConcurrency: 100,
    maxPerDestination: 20,
    onCleanup,
    analyze: false,
  });
  startWorker(ours, { onCleanup });
  const { segment } = await seed(ours, SIZE);
  const probe = await commitProbe(ours.databaseUrl);
  const before = await probe(10);
  const lsn = async () => (await ours.db.raw('select pg_current_wal_lsn()::text as l')).rows[0].l as string;
  const [from, cpu0, base] = [await lsn(), cpuOfAll(/^postgres/), sink.count()];
  const started = Date.now();
  await send(ours, segment);
  let delivering = true;
  const during: number[] = [];
  const probing = (async () => {
    while (delivering) during.push(...(await probe(2)));
  })();
  await sink.waitFor(base + SIZE, 3_600_000);
  const seconds = (Date.now() - started) / 1000;
  delivering = false;
  await probing;
  const [to, cpu1] = [await lsn(), cpuOfAll(/^postgres/)];
  const { rows } = await ours.db.raw(`select pg_relation_filenode(oid)::text as node, relname,
    (select oid::text from pg_database where datname = current_database()) as db,
    (select setting from pg_settings where name = 'data_directory') as dir
    from pg_class where pg_relation_filenode(oid) is not null`);
  const names = new Map<string, string>(rows.map((r: { node: string; relname: string }) => [r.node, r.relname]));
  const bytes = Number((await ours.db.raw('select pg_wal_lsn_diff(?, ?)::bigint as d', [to, from])).rows[0].d);
  const q = (l: number[]) => {
    const sorted = [...l].sort((a, b) => a - b);
    return `${fixed(percentile(sorted, 50), 2)} / ${fixed(percentile(sorted, 99), 2)}`;
  };
  console.log(`broadcast-wal: ${SIZE} messages in ${fixed(seconds, 1)} s (${fixed(SIZE / seconds, 0)}/s)`);
  console.log(`PostgreSQL CPU per message: ${fixed(((cpu1 - cpu0) * 1e6) / SIZE, 0)} µs`);
  console.log(`WAL per message: ${fixed(bytes / SIZE, 0)} bytes (${fixed(bytes / 1e6, 1)} MB in all)`);
  console.log(`one-row INSERT p50 / p99 ms: alone ${q(before)}, during the broadcast ${q(during)}`);
  let by: Map<string, { records: number; bytes: number }> | undefined;
  try {
    by = walByRelation(path.join(rows[0].dir, 'pg_wal'), from, to, names, rows[0].db);
  } catch (err) {
    console.log(`(no split by table: ${WALDUMP} could not read the WAL: ${(err as Error).message.split('\n')[0]})`);
  }
  if (by) {
    const top = [...by.entries()].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 30);
    console.log(
      renderTable(
        ['relation', 'record', 'bytes/msg', 'records/msg'],
        top.map(([k, e]) => [...k.split('|'), fixed(e.bytes / SIZE, 0), fixed(e.records / SIZE, 2)]),
      ),
    );
  }
} finally {
  for (const step of cleanups) await step().catch((err) => console.error(err));
}
