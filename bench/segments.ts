// The segments suite of `npm run bench` (bench/README.md, "The segments suite"): one team of a million contacts
// (bench/segments-seed.ts), filter segments made through the real api process, and the time the api takes to answer
// each one's count (GET /segments/{id}) and its first page of contacts (GET /segments/{id}/contacts), run after run.
// The issue's targets (a three-condition filter: one on a property, one on engagement; count under 1 s and first
// page under 100 ms at the median) as PASS/FAIL lines; with BENCH_SEGMENTS_EXPLAIN=1 each count's plan (EXPLAIN
// ANALYZE of the statement the api runs) goes to stderr.
import { loadavg } from 'node:os';
import { createDb } from '../shared/db/knex.ts';
import { createTeamWithKey } from '../shared/cli/commands.ts';
import { setRateLimit } from '../shared/teams/teams.ts';
import { compileFilter, filterContext } from '../shared/segments/filter-sql.ts';
import type { FilterNode } from '../shared/segments/filter-schema.ts';
import { createTestDatabase } from '../test/helpers/db.ts';
import { startServer } from './servers.ts';
import { USER_AGENT } from './load.ts';
import { fixed, renderTable } from './table.ts';
import { addHandMembers, seedAudience } from './segments-seed.ts';

export interface SegmentBenchOptions {
  contacts: number;
  runs: number;
  redisUrl: string;
  onCleanup(step: () => Promise<unknown>): void;
}

export const COUNT_TARGET_MS = 1000;
export const FIRST_PAGE_TARGET_MS = 100;

const plan = (value: string) => ({ field: 'property', key: 'plan', operator: 'equals', value });
const opened30 = { field: 'opened', operator: 'within_last_days', days: 30 };
const createdYear = { field: 'created_at', operator: 'within_last_days', days: 365 };

/** [name, filter, hand members (every n-th contact), is the target] */
function shapes(news: string): [string, FilterNode | null, number, boolean][] {
  return [
    [
      'all: plan = trial, opened 30 d, created 365 d',
      { all: [plan('trial'), opened30, createdYear] } as FilterNode,
      0,
      true,
    ],
    ['the same + 1,000 hand members', { all: [plan('trial'), opened30, createdYear] } as FilterNode, 1000, false],
    ['any: the same three', { any: [plan('trial'), opened30, createdYear] } as FilterNode, 0, false],
    [
      'all: vip, subscribed to News, not received 30 d',
      {
        all: [
          { field: 'property', key: 'vip', operator: 'equals', value: true },
          { field: 'topic', topic_id: news, operator: 'subscribed' },
          { field: 'received', operator: 'not_within_last_days', days: 30 },
        ],
      } as FilterNode,
      0,
      false,
    ],
    [
      'all: first name Eve, email ends with @d9.bench.test, opened 30 d',
      {
        all: [
          { field: 'first_name', operator: 'equals', value: 'Eve' },
          { field: 'email', operator: 'ends_with', value: '@d9.bench.test' },
          opened30,
        ],
      } as FilterNode,
      0,
      false,
    ],
    [
      'all: seats > 45, email ends with @d7.bench.test, clicked 30 d (none)',
      {
        all: [
          { field: 'property', key: 'seats', operator: 'greater_than', value: 45 },
          { field: 'email', operator: 'ends_with', value: '@d7.bench.test' },
          { field: 'clicked', operator: 'within_last_days', days: 30 },
        ],
      } as FilterNode,
      0,
      false,
    ],
    ['by hand only: 1,000 members', null, 1000, false],
  ];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const max = (xs: number[]) => Math.max(...xs);

async function timed(url: string, key: string): Promise<{ ms: number; body: Record<string, unknown> }> {
  const started = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}`, 'user-agent': USER_AGENT } });
  const body = (await res.json()) as Record<string, unknown>;
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${JSON.stringify(body)}`);
  return { ms, body };
}

interface Row {
  name: string;
  members: number;
  count: number[];
  page: number[];
  target: boolean;
}

export async function runSegmentBench(options: SegmentBenchOptions): Promise<boolean> {
  const database = await createTestDatabase();
  options.onCleanup(() => database.drop());
  const db = createDb({ DATABASE_URL: database.url }, { min: 0, max: 2 });
  options.onCleanup(() => db.destroy());
  const load = [loadavg()];
  const { team, api_key: key } = await createTeamWithKey(db, 'Segments bench');
  await setRateLimit(db, team.id, 100_000);
  console.error(`bench: segments: seeding ${options.contacts} contacts`);
  const seeded = await seedAudience(db, team.id, options.contacts);
  const api = await startServer('api', 'api/main.ts', {
    NODE_ENV: 'production',
    LOG_LEVEL: 'silent',
    HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    REDIS_URL: options.redisUrl,
    REDIS_PREFIX: `pwbench-segments-${process.pid}`,
    RATE_LIMIT_RPS: '100000',
    RESERVED_TLDS_ALLOWED: 'test',
  });
  options.onCleanup(() => api.stop());

  const rows: Row[] = [];
  for (const [name, filter, every, target] of shapes(seeded.topics.news)) {
    const res = await fetch(`${api.url}/segments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'user-agent': USER_AGENT, 'content-type': 'application/json' },
      body: JSON.stringify({ name, ...(filter ? { filter } : {}) }),
    });
    const { id } = (await res.json()) as { id: string };
    if (res.status !== 201) throw new Error(`POST /segments ${name}: ${res.status}`);
    if (every) await addHandMembers(db, team.id, id, every);
    if (filter && process.env.BENCH_SEGMENTS_EXPLAIN) await explain(db, team.id, filter, name);
    const row: Row = { name, members: 0, count: [], page: [], target };
    console.error(`bench: segments: ${name}: ${options.runs} runs`);
    for (let i = 0; i < options.runs; i++) {
      const counted = await timed(`${api.url}/segments/${id}`, key);
      row.count.push(counted.ms);
      row.members = counted.body.count as number;
      row.page.push((await timed(`${api.url}/segments/${id}/contacts?limit=20`, key)).ms);
    }
    rows.push(row);
  }
  load.push(loadavg());
  return report(options, rows, seeded.timings, load);
}

/** EXPLAIN ANALYZE of the count's filter part as membership.ts runs it, to stderr. */
async function explain(db: ReturnType<typeof createDb>, teamId: string, filter: FilterNode, name: string) {
  await db.transaction(async (trx) => {
    await trx.raw(`select set_config('jit', 'off', true), set_config('work_mem', '32MB', true)`);
    const f = compileFilter(filter, await filterContext(trx, teamId, filter));
    const { rows } = await trx.raw(
      `explain (analyze, buffers) select count(*) from contacts c where c.team_id = ? and ${f.sql}`,
      [teamId, ...f.bindings],
    );
    console.error(
      `bench: segments: plan of ${name}:\n${rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n')}`,
    );
  });
}

function report(options: SegmentBenchOptions, rows: Row[], seeding: [string, number][], load: number[][]): boolean {
  console.log('');
  console.log(
    `segments: one team of ${options.contacts} contacts; ${options.runs} runs each through the api process (GET /segments/{id}: the count; GET /segments/{id}/contacts?limit=20: the first page)`,
  );
  console.log(`seeding: ${seeding.map(([what, s]) => `${what} ${s.toFixed(1)} s`).join(', ')}`);
  console.log('');
  console.log(
    renderTable(
      ['segment', 'members', 'count p50 ms', 'count max ms', 'first page p50 ms', 'first page max ms'],
      rows.map((r) => [
        r.name,
        r.members,
        fixed(median(r.count), 0),
        fixed(max(r.count), 0),
        fixed(median(r.page), 1),
        fixed(max(r.page), 1),
      ]),
    ),
  );
  const fmt = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  console.log(`load average (1, 5, 15 min): ${fmt(load[0])} at the start, ${fmt(load[1])} at the end`);
  const target = rows.find((r) => r.target)!;
  const count = median(target.count);
  const page = median(target.page);
  const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
  console.log(
    `${verdict(count < COUNT_TARGET_MS)} count of "${target.name}": ${count.toFixed(0)} ms at the median (target < ${COUNT_TARGET_MS} ms; runs: ${target.count.map((x) => x.toFixed(0)).join(', ')})`,
  );
  console.log(
    `${verdict(page < FIRST_PAGE_TARGET_MS)} first page of it: ${page.toFixed(1)} ms at the median (target < ${FIRST_PAGE_TARGET_MS} ms; runs: ${target.page.map((x) => x.toFixed(1)).join(', ')})`,
  );
  return true;
}
