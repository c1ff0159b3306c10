// Retention of the tracking and metrics rows (docs/tracking.md, docs/metrics.md), run by the worker's hourly
// maintenance: every open and click hit (`email_engagements`, one row each, the table that grows fastest) is kept
// ENGAGEMENT_RETENTION_DAYS, and the metrics counters (`email_metric_buckets`, `email_metric_emails`: quarter-hour
// rows) METRICS_RETENTION_DAYS; `GET /emails/metrics` over an older range counts nothing there. Each recipient's
// first open and click (`email_recipient_engagement`, one row per recipient that engaged, which decides that a later
// hit fires no second webhook) stay as long as the recipient. Deleted in bounded rounds: a first run over a large
// backlog goes over several hours.
import type { Knex } from 'knex';

const DAY = 86_400_000;
const ROUND_ROWS = 10_000;
const ROUNDS = 20;

/** The smallest UUID v7 of the millisecond `at`: every id made before it sorts below it (shared/ids.ts). */
export function idBefore(at: Date): string {
  const hex = at.getTime().toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`;
}

export interface RetentionSettings {
  ENGAGEMENT_RETENTION_DAYS: number;
  METRICS_RETENTION_DAYS: number;
}

export interface Pruned {
  email_engagements: number;
  email_metric_rows: number;
}

/**
 * Deletes the engagement hits and metrics counters older than their windows before `now`. Hits go by their id (UUID
 * v7, made at the hit: a range of the primary key); counters team by team on their `(team_id, bucket ...)` indexes.
 */
export async function pruneTracking(db: Knex, settings: RetentionSettings, now = new Date()): Promise<Pruned> {
  const hits = idBefore(new Date(now.getTime() - settings.ENGAGEMENT_RETENTION_DAYS * DAY));
  let email_engagements = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const n = await db('email_engagements')
      .whereIn('id', db('email_engagements').where('id', '<', hits).orderBy('id').limit(ROUND_ROWS).select('id'))
      .delete();
    email_engagements += n;
    if (n < ROUND_ROWS) break;
  }
  const buckets = new Date(now.getTime() - settings.METRICS_RETENTION_DAYS * DAY);
  let email_metric_rows = 0;
  const teams: string[] = await db('teams').pluck('id');
  for (const team of teams) {
    email_metric_rows += await db('email_metric_buckets')
      .where({ team_id: team })
      .where('bucket', '<', buckets)
      .delete();
    email_metric_rows += await db('email_metric_emails')
      .where({ team_id: team })
      .where('bucket', '<', buckets)
      .delete();
  }
  return { email_engagements, email_metric_rows };
}
