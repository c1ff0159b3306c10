// GET /emails/metrics over 90 days for a team with 10 million events (bench/tracking.ts): the counters such events
// leave seeded with generate_series (per quarter hour over 90 days, five domains; per email for a million emails),
// nine other teams' counters beside them, then each query shape asked of the real api, one at a time.
import { performance } from 'node:perf_hooks';
import { createTeamWithKey } from '../shared/cli/commands.ts';
import { setRateLimit } from '../shared/teams/teams.ts';
import { COUNTERS } from '../shared/email-metrics/counters.ts';
import { USER_AGENT } from './load.ts';
import type { Ours } from './sending-ours.ts';

export const EVENTS = 10_000_000;
const DAYS = 90;
const DOMAINS = 5;
const OTHER_TEAMS = 9;
const EMAILS = 1_000_000;

export interface QueryRun {
  name: string;
  rows: number;
  p50: number;
  p99: number;
  max: number;
}

// Each bucket row's events spread over the counters in these shares (a newsletter's: most sent are delivered, a
// quarter opened, a few bounced); the shares add up to 1.
const SHARES: Partial<Record<(typeof COUNTERS)[number], number>> = {
  sent: 0.3,
  delivered: 0.29,
  opened: 0.18,
  clicked: 0.06,
  unique_opened: 0.1,
  unique_clicked: 0.03,
  bounced: 0.01,
  bounced_permanent: 0.005,
  bounced_transient: 0.005,
  complained: 0.002,
  unsubscribed: 0.003,
  delivery_delayed: 0.005,
  suppressed: 0.005,
};

/** Seeds the counters of `EVENTS` events for a new team (and of as many for each other team); its key and ids. */
export async function seedMetrics(ours: Ours): Promise<{ key: string; domainIds: string[]; emailIds: string[] }> {
  const db = ours.db;
  const teams = [];
  for (let t = 0; t <= OTHER_TEAMS; t++) {
    const { team, api_key } = await createTeamWithKey(db, `Metrics ${t}`);
    await setRateLimit(db, team.id, 100_000);
    const domainIds = [];
    for (let d = 0; d < DOMAINS; d++) {
      const res = await fetch(`${ours.api.url}/domains`, {
        method: 'POST',
        headers: { 'user-agent': USER_AGENT, authorization: `Bearer ${api_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `metrics-${t}-${d}.test` }),
      });
      domainIds.push(((await res.json()) as { id: string }).id);
    }
    teams.push({ id: team.id, key: api_key, domainIds });
  }
  const rowsPerTeam = DAYS * 96 * DOMAINS;
  const perRow = EVENTS / rowsPerTeam;
  const columns = Object.keys(SHARES);
  const values = Object.values(SHARES).map((s) => `round(${s} * ?)::int`);
  for (const t of teams) {
    await db.raw(
      `insert into email_metric_buckets (team_id, bucket, domain_id, ${columns.join(', ')})
       select ?::uuid, b, d, ${values.join(', ')}
       from generate_series(date_bin('15 minutes', now() - interval '${DAYS} days', timestamptz '2000-01-01'), now(), interval '15 minutes') b,
         unnest(?::uuid[]) d`,
      [t.id, ...columns.map(() => perRow), t.domainIds],
    );
  }
  const team = teams[0];
  await db.raw(
    `insert into email_metric_emails (email_id, bucket, team_id, domain_id, sent, delivered, opened, clicked)
     select gen_random_uuid(), date_bin('15 minutes', now() - (random() * interval '${DAYS} days'), timestamptz '2000-01-01'),
       ?::uuid, (?::uuid[])[1 + (i % ${DOMAINS})], 1, 1, (i % 3 = 0)::int, (i % 10 = 0)::int
     from generate_series(1, ${EMAILS}) i`,
    [team.id, team.domainIds],
  );
  await db.raw('vacuum analyze email_metric_buckets');
  await db.raw('vacuum analyze email_metric_emails');
  const emailIds: string[] = await db('email_metric_emails').where({ team_id: team.id }).limit(100).pluck('email_id');
  // The emails the filter names must be the team's (the api checks): 100 rows of them, nothing else of their sends.
  await db('emails').insert(
    emailIds.map((id) => ({
      id,
      team_id: team.id,
      domain_id: team.domainIds[0],
      source: 'api',
      from: 'bench@metrics-0-0.test',
      from_address: 'bench@metrics-0-0.test',
      to: ['reader@metrics.test'],
      message_id: `<${id}@metrics-0-0.test>`,
      status: 'done',
      last_event: 'delivered',
    })),
  );
  return { key: team.key, domainIds: team.domainIds, emailIds };
}

/** `GET /emails/metrics?<query>` `n` times in a row; wall-clock ms per request. */
async function timed(ours: Ours, key: string, name: string, query: string, n: number): Promise<QueryRun> {
  const ms: number[] = [];
  let rows = 0;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await fetch(`${ours.api.url}/emails/metrics?${query}`, {
      headers: { 'user-agent': USER_AGENT, authorization: `Bearer ${key}` },
    });
    const body = (await res.json()) as { data?: unknown[] };
    ms.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`GET /emails/metrics?${query}: ${res.status} ${JSON.stringify(body)}`);
    rows = body.data?.length ?? 1;
  }
  ms.sort((a, b) => a - b);
  const at = (p: number) => ms[Math.min(ms.length - 1, Math.ceil((p / 100) * ms.length) - 1)];
  return { name, rows, p50: at(50), p99: at(99), max: ms[ms.length - 1] };
}

export async function queryMetrics(
  ours: Ours,
  seeded: Awaited<ReturnType<typeof seedMetrics>>,
  n: number,
): Promise<QueryRun[]> {
  const since = new Date(Date.now() - DAYS * 86_400_000).toISOString().slice(0, 10);
  const range = `start_date=${since}`;
  const shapes: [string, string][] = [
    ['totals, every count', range],
    ['daily periods', `${range}&dimensions=period`],
    ['daily periods × domains', `${range}&dimensions=period,domain`],
    ['hourly periods (2,160)', `${range}&dimensions=period&granularity=hourly`],
    [
      'weekly, America/New_York, rates',
      `${range}&dimensions=period&granularity=weekly&timezone=America/New_York&metrics=sent,delivered,open_rate,click_rate,bounce_rate`,
    ],
    [
      'two domains, monthly',
      `${range}&dimensions=period,domain&granularity=monthly&domain_id=${seeded.domainIds.slice(0, 2).join(',')}`,
    ],
    ['100 emails by email', `${range}&dimensions=email&email_id=${seeded.emailIds.join(',')}`],
  ];
  const out = [];
  for (const [name, query] of shapes) out.push(await timed(ours, seeded.key, name, query, n));
  return out;
}
