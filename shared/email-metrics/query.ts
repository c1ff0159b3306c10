// GET /emails/metrics answered from the counters (counters.ts), never from the emails (docs/metrics.md). The range is
// resolved in the asked time zone by PostgreSQL (its zone database: a date is that day's local midnight, a DST day
// has 23 or 25 hours); the quarter-hour buckets (UTC) that start in it are summed, grouped by the period that
// contains them (date_trunc in the zone: each local hour, day, week or month is a union of whole buckets, in every
// zone, across DST changes) and by the other dimensions asked.
import type { Knex } from 'knex';
import { COUNTERS, type Counter } from './counters.ts';
import {
  invalid,
  MAX_PERIODS,
  RATE_OF,
  type Bound,
  type Granularity,
  type Metric,
  type MetricsQuery,
  type Rate,
} from './params.ts';

const UNIT: Record<Granularity, string> = { hourly: 'hour', daily: 'day', weekly: 'week', monthly: 'month' };

export interface Range {
  start: Date;
  end: Date;
  periods: number;
}

/** SQL for one bound as a timestamptz (named bindings): `end` of a date is the next local midnight (the day is in). */
function boundSql(b: Bound, name: string, end: boolean): string {
  if (b.kind === 'instant') return `cast(:${name} as timestamptz)`;
  if (b.kind === 'local') return `(cast(:${name} as timestamp) at time zone :tz)`;
  return end
    ? `((cast(:${name} as date) + 1)::timestamp at time zone :tz)`
    : `(cast(:${name} as date)::timestamp at time zone :tz)`;
}

// The periods of each granularity that [s, e) touches: from the one holding s to the one holding e's last instant.
const LAST = `((e - interval '1 microsecond') at time zone :tz)`;
const FIRST = `(s at time zone :tz)`;
const PERIODS: Record<Granularity, string> = {
  hourly: `floor(extract(epoch from (date_trunc('hour', e - interval '1 microsecond', :tz) - date_trunc('hour', s, :tz))) / 3600) + 1`,
  daily: `${LAST}::date - ${FIRST}::date + 1`,
  weekly: `(date_trunc('week', ${LAST})::date - date_trunc('week', ${FIRST})::date) / 7 + 1`,
  monthly: `(extract(year from ${LAST}) - extract(year from ${FIRST})) * 12 + extract(month from ${LAST}) - extract(month from ${FIRST}) + 1`,
};

/**
 * The range, in instants: the end defaults to now and is never later than now; the start defaults to six days
 * before the end (local days). The number of periods of the granularity it touches comes with it.
 */
export async function resolveRange(db: Knex, q: MetricsQuery, now = new Date()): Promise<Range> {
  const endSql = q.end ? boundSql(q.end, 'end', true) : 'cast(:now as timestamptz)';
  const startSql = q.start
    ? boundSql(q.start, 'start', false)
    : `((e at time zone :tz) - interval '6 days') at time zone :tz`;
  const { rows } = await db.raw(
    `with r0 as (select least(${endSql}, cast(:now as timestamptz)) as e), r as (select ${startSql} as s, e from r0)
     select s, e, case when s >= e then 0 else (${PERIODS[q.granularity]}) end::float8 as periods from r`,
    { now, tz: q.timezone, ...(q.end ? { end: q.end.value } : {}), ...(q.start ? { start: q.start.value } : {}) },
  );
  const [row] = rows;
  if (row.s > row.e) throw invalid('start_date', 'must be on or before `end_date` (and not in the future).');
  if (row.periods > MAX_PERIODS)
    throw invalid(
      'granularity',
      `the range from \`start_date\` to \`end_date\` has ${row.periods} ${q.granularity} periods; at most ${MAX_PERIODS}.`,
    );
  return { start: row.s, end: row.e, periods: row.periods };
}

type Totals = Partial<Record<Metric, number>>;

/** The asked metrics of one row of sums: counters as they are, rates as fractions (4 decimals; 0 over nothing). */
function shape(sums: Record<Counter, number>, metrics: Metric[]): Totals {
  const out: Totals = {};
  for (const m of metrics) {
    if ((COUNTERS as readonly string[]).includes(m)) out[m] = sums[m as Counter];
    else {
      const [num, den] = RATE_OF[m as Rate];
      out[m] = sums[den] ? Math.round((sums[num] / sums[den]) * 10_000) / 10_000 : 0;
    }
  }
  return out;
}

/** The counters a list of metrics needs (a rate needs its two). */
function needed(metrics: Metric[]): Counter[] {
  const set = new Set<Counter>();
  for (const m of metrics) {
    if ((COUNTERS as readonly string[]).includes(m)) set.add(m as Counter);
    else RATE_OF[m as Rate].forEach((c) => set.add(c));
  }
  return COUNTERS.filter((c) => set.has(c));
}

export interface MetricsRow {
  period?: string;
  domain_id?: string | null;
  domain_name?: string | null;
  email_id?: string;
  broadcast_id?: string | null;
  [metric: string]: number | string | null | undefined;
}

export interface MetricsAnswer {
  totals: Totals;
  data?: MetricsRow[];
}

/** The sums over the range, grouped by the asked dimensions; `teamId` scopes every row. */
/** Which rows a query reads: its team, range and filters (SQL and bindings). */
function whereOf(teamId: string, q: MetricsQuery, range: Range): { sql: string; args: Knex.RawBinding[] } {
  const where = [
    `team_id = ?`,
    `bucket >= date_bin('15 minutes', ?::timestamptz, timestamptz '2000-01-01')`,
    `bucket < ?`,
  ];
  const args: Knex.RawBinding[] = [teamId, range.start, range.end];
  for (const [column, values] of [
    ['domain_id', q.domainIds],
    ['email_id', q.emailIds],
    ['broadcast_id', q.broadcastIds],
  ] as const) {
    if (values.length === 0) continue;
    where.push(`${column} = any(?::uuid[])`);
    args.push(values);
  }
  return { sql: where.join(' and '), args };
}

/**
 * The sums over the range, grouped by the asked dimensions; `teamId` scopes every row. With `period`, the buckets are
 * summed first (reading a team's range from the index alone, in order) and their periods taken after, once a bucket:
 * the time zone's rules run a few thousand times, not once a row.
 */
export async function queryMetrics(db: Knex, teamId: string, q: MetricsQuery, range: Range): Promise<MetricsAnswer> {
  const counters = needed(q.metrics);
  const perEmail = q.dimensions.includes('email') || q.emailIds.length > 0;
  const dims = (['domain', 'email', 'broadcast'] as const)
    .filter((d) => q.dimensions.includes(d))
    .map((d) => `${d}_id`);
  const where = whereOf(teamId, q, range);
  const table = perEmail ? 'email_metric_emails' : 'email_metric_buckets';
  const sums = (cast: boolean) =>
    counters.length
      ? counters.map((c) => `coalesce(sum(${c}), 0)${cast ? '::float8' : ''} as ${c}`)
      : ['count(*) as n'];
  const list = (cols: string[]) => cols.map((_, i) => i + 1).join(', ');
  let sql: string;
  let args: Knex.RawBinding[];
  if (q.dimensions.includes('period')) {
    const inner = `select bucket, ${[...dims, ...sums(false)].join(', ')} from ${table} where ${where.sql}
      group by ${['bucket', ...dims].join(', ')}`;
    const groups = ['period', ...dims];
    sql = `select ${[`date_trunc('${UNIT[q.granularity]}', bucket, ?) as period`, ...dims, ...sums(true)].join(', ')}
      from (${inner}) b group by ${list(groups)} order by ${list(groups)}`;
    args = [q.timezone, ...where.args];
  } else {
    const grouping = dims.length ? `group by ${list(dims)} order by ${list(dims)}` : '';
    sql = `select ${[...dims, ...sums(true)].join(', ')} from ${table} where ${where.sql} ${grouping}`;
    args = where.args;
  }
  const { rows } = await db.raw(sql, args);
  const totalSums = Object.fromEntries(counters.map((c) => [c, 0])) as Record<Counter, number>;
  for (const r of rows) for (const c of counters) totalSums[c] += Number(r[c]);
  const totals = shape(totalSums, q.metrics);
  if (q.dimensions.length === 0) return { totals };
  return { totals, data: await rowsOf(db, teamId, q, range, rows, counters) };
}

/**
 * Every period of the range, as instants, in order. Hours are physical (an hour after a local hour starts, the next
 * starts, DST changes included: the repeated hour is two), so they step in UTC; days, weeks and months are the zone's
 * calendar (23, 24 or 25 hours; weeks of 167 or 169), so they step on the local clock, each start then read in the
 * zone again (a local midnight that never happened is the day's first instant).
 */
function periodsSql(granularity: Granularity): string {
  const last = `cast(:end as timestamptz) - interval '1 microsecond'`;
  if (granularity === 'hourly')
    return `select distinct date_trunc('hour', p, :tz) as period from generate_series(
      date_trunc('hour', cast(:start as timestamptz), :tz), ${last}, interval '1 hour') p order by 1`;
  return `select distinct date_trunc(:unit, l at time zone :tz, :tz) as period from generate_series(
      date_trunc(:unit, cast(:start as timestamptz) at time zone :tz), (${last}) at time zone :tz, cast('1 ' || :unit as interval)) l
    order by 1`;
}

/** The grouped rows shaped, domain names added, and every period present when `period` is the only dimension. */
async function rowsOf(
  db: Knex,
  teamId: string,
  q: MetricsQuery,
  range: Range,
  rows: (Record<Counter, number> & {
    period?: Date;
    domain_id?: string | null;
    email_id?: string;
    broadcast_id?: string | null;
  })[],
  counters: Counter[],
): Promise<MetricsRow[]> {
  const zero = Object.fromEntries(counters.map((c) => [c, 0])) as Record<Counter, number>;
  let all = rows;
  if (q.dimensions.length === 1 && q.dimensions[0] === 'period') {
    const seen = new Map(rows.map((r) => [r.period!.getTime(), r]));
    const { rows: starts } = await db.raw(periodsSql(q.granularity), {
      unit: UNIT[q.granularity],
      tz: q.timezone,
      start: range.start,
      end: range.end,
    });
    all = starts.map((p: { period: Date }) => seen.get(p.period.getTime()) ?? { ...zero, period: p.period });
  }
  const names = new Map<string, string>();
  if (q.dimensions.includes('domain')) {
    const ids = [...new Set(all.map((r) => r.domain_id).filter((d): d is string => !!d))];
    const found: { id: string; name: string }[] = ids.length
      ? await db('domains').where({ team_id: teamId }).whereIn('id', ids).select('id', 'name')
      : [];
    for (const d of found) names.set(d.id, d.name);
  }
  return all.map((r) => ({
    ...(q.dimensions.includes('period') ? { period: r.period!.toISOString() } : {}),
    ...(q.dimensions.includes('domain')
      ? { domain_id: r.domain_id ?? null, domain_name: r.domain_id ? (names.get(r.domain_id) ?? null) : null }
      : {}),
    ...(q.dimensions.includes('email') ? { email_id: r.email_id } : {}),
    ...(q.dimensions.includes('broadcast') ? { broadcast_id: r.broadcast_id ?? null } : {}),
    ...shape(r, q.metrics),
  }));
}

/** 422 naming the first id of `ids` the team has no such thing of. */
export async function checkOwned(db: Knex, teamId: string, q: MetricsQuery): Promise<void> {
  for (const [path, table, values] of [
    ['domain_id', 'domains', q.domainIds],
    ['email_id', 'emails', q.emailIds],
    ['broadcast_id', 'broadcasts', q.broadcastIds],
  ] as const) {
    if (values.length === 0) continue;
    const found = new Set(await db(table).where({ team_id: teamId }).whereIn('id', values).pluck('id'));
    const missing = values.find((v) => !found.has(v));
    if (missing) throw invalid(path, `\`${missing}\` is not one of this team's ${table}.`);
  }
}
