// What the api and PostgreSQL were doing during a round of the tracking suite's POST /emails (bench/tracking.ts part
// 3): the api's event-loop delay and garbage collections from its own metrics listener (prom-client's defaults:
// the delay histogram is reset at each scrape, so a scrape before the round and one after give the round's), and
// the wait events of the database's active backends sampled every 10 ms. It tells a pause of the api's event loop
// from a wait inside PostgreSQL when both the sends and the hits stall together.
import type { Knex } from 'knex';

export interface Stalls {
  /** The api's event-loop delay over the round, ms. */
  loopP99Ms: number;
  loopMaxMs: number;
  /** The api's garbage collections over the round by kind: count and total pause, ms. */
  gc: Record<string, { count: number; ms: number }>;
  /** PostgreSQL's active backends over the samples, by wait event ('CPU' when none): share of the samples. */
  waits: { wait: string; share: number }[];
  /** The statements those backends ran (the first 100 characters, spaces folded): share of the samples. */
  statements: { statement: string; share: number }[];
  samples: number;
  /**
   * The server's WAL over the round (pg_stat_wal, the whole cluster): MB written, flushes to disk (each a commit's
   * wait, shared by the commits that queue behind it), full-page images, writes forced by full WAL buffers; and
   * checkpoints begun (pg_stat_bgwriter); the flushes' mean time in ms, where the backends that flushed ran with
   * `track_wal_io_timing` (NaN where none did).
   */
  wal: { mb: number; syncs: number; fpi: number; buffersFull: number; checkpoints: number; syncMeanMs: number };
}

const WAL_SQL = `select w.wal_bytes::float8 as bytes, w.wal_sync::float8 as syncs, w.wal_fpi::float8 as fpi, w.wal_buffers_full::float8 as full,
  w.wal_sync_time::float8 as sync_ms, (b.checkpoints_timed + b.checkpoints_req)::float8 as checkpoints
  from pg_stat_wal w, pg_stat_bgwriter b`;
type Wal = { bytes: number; syncs: number; fpi: number; full: number; sync_ms: number; checkpoints: number };

type Scrape = Map<string, number>;

async function scrape(url: string): Promise<Scrape> {
  const text = await (await fetch(url)).text();
  const values: Scrape = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    values.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return values;
}

function gcDelta(before: Scrape, after: Scrape): Stalls['gc'] {
  const gc: Stalls['gc'] = {};
  for (const [name, value] of after) {
    const m = /^nodejs_gc_duration_seconds_(sum|count)\{kind="(\w+)"\}$/.exec(name);
    if (!m) continue;
    const d = value - (before.get(name) ?? 0);
    const k = (gc[m[2]] ??= { count: 0, ms: 0 });
    if (m[1] === 'count') k.count = d;
    else k.ms = d * 1000;
  }
  return gc;
}

/** Starts sampling; the returned function ends it and tells what was seen. */
export async function watchStalls(db: Knex, database: string, metricsUrl: string): Promise<() => Promise<Stalls>> {
  const before = await scrape(metricsUrl);
  const walBefore: Wal = (await db.raw(WAL_SQL)).rows[0];
  const counts = new Map<string, number>();
  const statements = new Map<string, number>();
  let samples = 0;
  let on = true;
  const sampling = (async () => {
    while (on) {
      const { rows } = await db.raw(
        `select coalesce(wait_event_type || ':' || wait_event, 'CPU') as wait,
           left(regexp_replace(query, '\\s+', ' ', 'g'), 100) as statement
         from pg_stat_activity where datname = ? and state = 'active' and pid <> pg_backend_pid()`,
        [database],
      );
      samples++;
      for (const r of rows as { wait: string; statement: string }[]) {
        counts.set(r.wait, (counts.get(r.wait) ?? 0) + 1);
        statements.set(r.statement, (statements.get(r.statement) ?? 0) + 1);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return async () => {
    on = false;
    await sampling;
    const after = await scrape(metricsUrl);
    const walAfter: Wal = (await db.raw(WAL_SQL)).rows[0];
    return {
      loopP99Ms: (after.get('nodejs_eventloop_lag_p99_seconds') ?? NaN) * 1000,
      loopMaxMs: (after.get('nodejs_eventloop_lag_max_seconds') ?? NaN) * 1000,
      gc: gcDelta(before, after),
      waits: [...counts]
        .map(([wait, n]) => ({ wait, share: n / samples }))
        .sort((a, b) => b.share - a.share)
        .slice(0, 5),
      statements: [...statements]
        .map(([statement, n]) => ({ statement, share: n / samples }))
        .sort((a, b) => b.share - a.share)
        .slice(0, 8),
      samples,
      wal: {
        mb: (walAfter.bytes - walBefore.bytes) / 1e6,
        syncs: walAfter.syncs - walBefore.syncs,
        fpi: walAfter.fpi - walBefore.fpi,
        buffersFull: walAfter.full - walBefore.full,
        checkpoints: walAfter.checkpoints - walBefore.checkpoints,
        syncMeanMs:
          walAfter.sync_ms > walBefore.sync_ms
            ? (walAfter.sync_ms - walBefore.sync_ms) / (walAfter.syncs - walBefore.syncs)
            : NaN,
      },
    };
  };
}
