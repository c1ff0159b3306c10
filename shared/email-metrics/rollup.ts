// The worker's part of the metrics (docs/metrics.md): the delivery events (email.sent, delivered, bounced, ...) added
// to the counters (counters.ts) past a cursor of its own. The events table is read as the webhook fan-out reads it
// (shared/webhooks/fanout.ts): in (xid, id) order, only events whose inserting transaction is older than every
// transaction still running, so nothing can commit behind the cursor; the counters and the cursor move in one
// transaction, so each event is counted exactly once, whatever crashes. Neither the api nor the mta does any of this
// work: their hot paths only write the events they wrote already.
//
// What each event adds (per recipient: an event names the recipients it concerns in `data.to`):
// email.sent → sent (the email's recipients handed to delivery: not suppressed, not refused at acceptance),
// email.delivered → delivered, email.delivery_delayed → delivery_delayed, email.bounced → bounced and
// bounced_permanent / _transient / _undetermined by `bounce.type`, email.complained → complained, email.failed →
// failed, email.suppressed → suppressed, email.opened → unique_opened, email.clicked → unique_clicked (both fired
// once per recipient, engagement.ts), email.received → received (per received message, by its receiving domain).
import type { Knex } from 'knex';
import { addCounts, type CountRow, type Counts } from './counters.ts';

export const BATCH = 1000;

const COUNTED: Record<string, keyof Counts> = {
  'email.sent': 'sent',
  'email.delivered': 'delivered',
  'email.delivery_delayed': 'delivery_delayed',
  'email.bounced': 'bounced',
  'email.complained': 'complained',
  'email.failed': 'failed',
  'email.suppressed': 'suppressed',
  'email.opened': 'unique_opened',
  'email.clicked': 'unique_clicked',
  'email.received': 'received',
};
const TYPES = Object.keys(COUNTED);
const BOUNCE: Record<string, keyof Counts> = {
  Permanent: 'bounced_permanent',
  Transient: 'bounced_transient',
};

interface EventRow {
  id: string;
  team_id: string;
  type: string;
  created_at: Date;
  xid: string;
  email_id: string | null;
  recipients: number;
  bounce_type: string | null;
}

export interface RollUpResult {
  events: number;
  /** Another worker holds the cursor. */
  busy: boolean;
  /** Committed events wait behind an older transaction still running: look again shortly. */
  waiting: boolean;
}

// Ordered by the table's xid (`events.xid`), not the select list's text of it (fanout.ts says why).
const EVENTS_SQL = `select id, team_id, type, created_at, xid::text as xid,
    case when data->>'email_id' ~* '^[0-9a-f-]{36}$' then data->>'email_id' end as email_id,
    greatest(1, case when jsonb_typeof(data->'to') = 'array' then jsonb_array_length(data->'to') else 1 end) as recipients,
    data->'bounce'->>'type' as bounce_type
  from events where xid is not null and (xid, id) > (?::xid8, ?::uuid) and type = any(?::text[])
  order by events.xid, events.id limit ?`;

/** Per sent email: its domain, and the recipients handed to delivery (not suppressed, not refused at acceptance). */
async function sentEmails(trx: Knex, ids: string[]) {
  type Sent = { domain_id: string | null; broadcast_id: string | null; sent: number };
  if (ids.length === 0) return new Map<string, Sent>();
  const { rows } = await trx.raw(
    `select e.id, e.domain_id, e.broadcast_id, (select count(*) from email_recipients r where r.email_id = e.id
       and r.status <> 'suppressed' and not (r.status = 'failed' and r.attempts = 0))::int as sent
     from emails e where e.id = any(?::uuid[])`,
    [ids],
  );
  return new Map<string, Sent>(rows.map((r: { id: string } & Sent) => [r.id, r]));
}

async function receivedDomains(trx: Knex, ids: string[]) {
  if (ids.length === 0) return new Map<string, string | null>();
  const rows: { id: string; domain_id: string | null }[] = await trx('received_messages')
    .whereIn('id', ids)
    .select('id', 'domain_id');
  return new Map(rows.map((r) => [r.id, r.domain_id]));
}

function countsOf(e: EventRow, sent: number | undefined): Counts {
  const counter = COUNTED[e.type];
  if (e.type === 'email.received') return { received: 1 };
  if (e.type === 'email.sent') return { sent: sent ?? e.recipients };
  const counts: Counts = { [counter]: e.recipients };
  if (e.type === 'email.bounced') counts[BOUNCE[e.bounce_type ?? ''] ?? 'bounced_undetermined'] = e.recipients;
  return counts;
}

/** One batch of events added to the counters, with the cursor, in one transaction. */
export async function rollUp(db: Knex, batch = BATCH): Promise<RollUpResult> {
  return db.transaction(async (trx) => {
    const {
      rows: [cursor],
    } = await trx.raw(
      `select last_xid::text as last_xid, last_event_id, pg_snapshot_xmin(pg_current_snapshot())::text as xmin
       from email_metrics_cursor where id = 1 for update skip locked`,
    );
    if (!cursor) return { events: 0, busy: true, waiting: false };
    const { rows: found } = (await trx.raw(EVENTS_SQL, [cursor.last_xid, cursor.last_event_id, TYPES, batch + 1])) as {
      rows: EventRow[];
    };
    const xmin = BigInt(cursor.xmin);
    const events = found.filter((e) => BigInt(e.xid) < xmin).slice(0, batch);
    const waiting = events.length < batch && found.length > events.length;
    if (events.length === 0) return { events: 0, busy: false, waiting };
    const outbound = events.filter((e) => e.type !== 'email.received' && e.email_id);
    const emails = await sentEmails(trx, [...new Set(outbound.map((e) => e.email_id!))]);
    const inbound = events.filter((e) => e.type === 'email.received' && e.email_id);
    const received = await receivedDomains(trx, [...new Set(inbound.map((e) => e.email_id!))]);
    const rows: CountRow[] = events.map((e) => {
      const isReceived = e.type === 'email.received';
      const email = !isReceived && e.email_id ? emails.get(e.email_id) : undefined;
      return {
        team_id: e.team_id,
        at: e.created_at,
        domain_id: isReceived ? (received.get(e.email_id ?? '') ?? null) : (email?.domain_id ?? null),
        broadcast_id: email?.broadcast_id ?? null,
        email_id: isReceived ? null : email ? e.email_id : null,
        counts: countsOf(e, email?.sent),
      };
    });
    await addCounts(trx, rows);
    const last = events[events.length - 1];
    await trx('email_metrics_cursor').where({ id: 1 }).update({ last_xid: last.xid, last_event_id: last.id });
    return { events: events.length, busy: false, waiting };
  });
}

/** Every batch there is; what the last one said. */
export async function rollUpAll(db: Knex, batch = BATCH): Promise<RollUpResult> {
  let events = 0;
  for (;;) {
    const r = await rollUp(db, batch);
    events += r.events;
    if (r.events < batch) return { ...r, events };
  }
}

/** Rolls up until nothing committed waits (tests, one-shot runs); throws after `ms` (a transaction held open). */
export async function rollUpSettled(db: Knex, ms = 10_000): Promise<number> {
  const deadline = Date.now() + ms;
  let events = 0;
  for (;;) {
    const r = await rollUpAll(db);
    events += r.events;
    if (!r.waiting && !r.busy) return events;
    if (Date.now() > deadline) throw new Error(`metrics rollup still held back after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
