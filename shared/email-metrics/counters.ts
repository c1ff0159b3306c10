// The counters GET /emails/metrics reads (docs/metrics.md): per quarter hour (UTC), team, sending domain and
// broadcast, and again per email. Every writer adds to them through addCounts, in the transaction that records what
// it counts: the worker's rollup of the delivery events (rollup.ts), the api's engagement recorder (every human open
// and click) and the unsubscribe page.
import type { Knex } from 'knex';
import { prepared } from '../db/prepared.ts';

/** The stored counters; the rates (metrics.ts) are computed from them. Order as the reference lists them. */
export const COUNTERS = [
  'received',
  'delivered',
  'complained',
  'suppressed',
  'bounced',
  'bounced_transient',
  'bounced_permanent',
  'bounced_undetermined',
  'opened',
  'clicked',
  'unsubscribed',
  'delivery_delayed',
  'failed',
  'sent',
  'unique_opened',
  'unique_clicked',
] as const;
export type Counter = (typeof COUNTERS)[number];

export type Counts = Partial<Record<Counter, number>>;

export interface CountRow {
  team_id: string;
  /** When it happened; counted in its quarter hour. */
  at: Date;
  domain_id: string | null;
  broadcast_id: string | null;
  /** Null for what belongs to no sent email (a received message): counted per bucket only. */
  email_id: string | null;
  counts: Counts;
}

export const BUCKET_MS = 15 * 60 * 1000;

/** The start of the quarter hour (UTC) `at` falls in. */
export const bucketOf = (at: Date) => new Date(Math.floor(at.getTime() / BUCKET_MS) * BUCKET_MS);

const COLUMNS = COUNTERS.join(', ');
const TYPED = COUNTERS.map((c) => `${c} int`).join(', ');
const ADD = (table: string) => COUNTERS.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(', ');

const BUCKETS_SQL = `insert into email_metric_buckets (team_id, bucket, domain_id, broadcast_id, ${COLUMNS})
  select team_id, bucket, domain_id, broadcast_id, ${COLUMNS}
  from json_to_recordset(?::json) as r(team_id uuid, bucket timestamptz, domain_id uuid, broadcast_id uuid, ${TYPED})
  order by team_id, bucket, domain_id, broadcast_id
  on conflict (team_id, bucket, domain_id, broadcast_id) do update set ${ADD('email_metric_buckets')}`;
const EMAILS_SQL = `insert into email_metric_emails (email_id, bucket, team_id, domain_id, broadcast_id, ${COLUMNS})
  select email_id, bucket, team_id, domain_id, broadcast_id, ${COLUMNS}
  from json_to_recordset(?::json) as r(email_id uuid, bucket timestamptz, team_id uuid, domain_id uuid, broadcast_id uuid, ${TYPED})
  order by email_id, bucket
  on conflict (email_id, bucket) do update set ${ADD('email_metric_emails')}`;

type Summed = Omit<CountRow, 'at' | 'counts'> & { bucket: string } & Record<Counter, number>;

/** `rows` summed by `key` (of the row and its bucket's start, ms): one row per key, its bucket an ISO string. */
function sum(rows: CountRow[], key: (r: CountRow, bucket: number) => string): Summed[] {
  const out = new Map<string, Summed>();
  for (const r of rows) {
    const bucket = Math.floor(r.at.getTime() / BUCKET_MS) * BUCKET_MS;
    const k = key(r, bucket);
    let s = out.get(k);
    if (!s) {
      s = { team_id: r.team_id, domain_id: r.domain_id, broadcast_id: r.broadcast_id, email_id: r.email_id } as Summed;
      s.bucket = new Date(bucket).toISOString();
      for (const c of COUNTERS) s[c] = 0;
      out.set(k, s);
    }
    for (const c in r.counts) s[c as Counter] += r.counts[c as Counter]!;
  }
  return [...out.values()];
}

/**
 * Adds `rows` to both tables (the per-email one for rows naming an email), in `db`'s transaction. The statements
 * insert in key order (their ORDER BY), so two writers lock the rows they share in the same order, never in a circle.
 */
export async function addCounts(db: Knex, rows: CountRow[]): Promise<void> {
  const counted = rows.filter((r) => Object.values(r.counts).some((n) => n));
  if (counted.length === 0) return;
  const buckets = sum(counted, (r, b) => [r.team_id, b, r.domain_id ?? '', r.broadcast_id ?? ''].join(' '));
  await prepared(db, 'pw_metric_buckets_add', BUCKETS_SQL, [JSON.stringify(buckets)]);
  const perEmail = sum(
    counted.filter((r) => r.email_id !== null),
    (r, b) => `${r.email_id} ${b}`,
  );
  if (perEmail.length) await prepared(db, 'pw_metric_emails_add', EMAILS_SQL, [JSON.stringify(perEmail)]);
}
