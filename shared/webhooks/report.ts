// What the worker tells the operator about each recorded webhook attempt: a log line (`webhook.delivered`,
// `webhook.retrying`, `webhook.failed`) naming the event, and for an email's event the email and the request that
// sent it (emails.request_id), so the line joins the api's `request` line; the deliveries counter and, for a
// success, the lag from the event's creation (its id is a UUID v7: the time is in it).
import type { Knex } from 'knex';
import type { Logger } from '../logger.ts';
import type { WorkerMetrics } from '../metrics/worker.ts';
import { idTime, isUuid } from '../ids.ts';
import { MAX_ATTEMPTS, type Sent } from './deliver.ts';

export interface ReportDeps {
  db: Knex;
  log?: Logger;
  metrics?: Pick<WorkerMetrics, 'webhookDeliveries' | 'webhookLag'>;
}

const resultOf = ({ delivery, outcome }: Sent) =>
  outcome.ok ? 'success' : delivery.attempt_count + 1 >= MAX_ATTEMPTS ? 'failed' : 'retry';

const EVENT = { success: 'webhook.delivered', retry: 'webhook.retrying', failed: 'webhook.failed' } as const;

/** data.email_id of an email.* event's payload; null for other events. */
function emailIdOf(type: string, payload: string): string | null {
  if (!type.startsWith('email.')) return null;
  try {
    const id = (JSON.parse(payload) as { data?: { email_id?: unknown } }).data?.email_id;
    return isUuid(id) ? id : null;
  } catch {
    return null;
  }
}

/** The request ids of these emails, in one lookup; none when it fails (the lines go out without them). */
async function requestIds(deps: ReportDeps, emailIds: string[]): Promise<Map<string, string | null>> {
  if (emailIds.length === 0) return new Map();
  try {
    const rows: { id: string; request_id: string | null }[] = await deps
      .db('emails')
      .whereIn('id', [...new Set(emailIds)])
      .select('id', 'request_id');
    return new Map(rows.map((r) => [r.id, r.request_id]));
  } catch (err) {
    deps.log?.warn({ err }, 'webhook.request_ids_unavailable');
    return new Map();
  }
}

export async function reportWebhookAttempts(deps: ReportDeps, sent: Sent[]): Promise<void> {
  for (const s of sent) {
    const result = resultOf(s);
    deps.metrics?.webhookDeliveries.inc({ result });
    const created = idTime(s.delivery.event_id);
    if (result === 'success' && created !== null)
      deps.metrics?.webhookLag.observe(Math.max(0, s.sentAt.getTime() + s.durationMs - created) / 1000);
  }
  const log = deps.log;
  if (!log?.isLevelEnabled('info')) return;
  const emails = sent.map((s) => emailIdOf(s.delivery.type, s.delivery.payload));
  const requests = await requestIds(
    deps,
    emails.filter((id): id is string => id !== null),
  );
  sent.forEach((s, i) => {
    const { delivery, outcome } = s;
    const emailId = emails[i];
    log.info(
      {
        deliveryId: delivery.id,
        endpointId: delivery.endpoint_id,
        eventId: delivery.event_id,
        type: delivery.type,
        attempt: delivery.attempt_count + 1,
        status: outcome.status,
        ms: Math.round(s.durationMs),
        ...(outcome.ok ? {} : { error: outcome.error }),
        ...(emailId ? { emailId, requestId: requests.get(emailId) ?? null } : {}),
      },
      EVENT[resultOf(s)],
    );
  });
}
