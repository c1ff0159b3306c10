// Fan-out: every event row becomes one delivery per endpoint of its team subscribed to its type (a disabled
// endpoint's delivery is born parked). A cursor row names the last event done; it advances in the same
// transaction as the deliveries it accounts for, so a crash neither loses an event nor sends it twice.
//
// Order and completeness under concurrent commits (the transactional outbox's rule): each event carries the id
// of its inserting transaction (`xid`, migration 20261122103000). The cursor walks (xid, id), and an event is
// read only once its xid is below the snapshot's xmin, the oldest transaction still running: every transaction
// with a smaller xid has ended by then, so nothing can later commit behind the cursor. A transaction still
// running holds back the events of younger ones until it ends (a fraction of a second normally; as long as it
// runs if someone keeps one open). Within a batch the deliveries are made in the events' id (creation) order.
// An endpoint receives the events created after it (its id is older than theirs), never the team's history.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { isoRequired } from '../time.ts';
import { prepared } from '../db/prepared.ts';

export const BATCH = 500;

interface EventRow {
  id: string;
  team_id: string;
  type: string;
  data: unknown;
  created_at: Date;
  xid: string;
}

export interface FanOutResult {
  /** Events consumed. */
  events: number;
  deliveries: number;
  /** Another worker holds the cursor: try again shortly, it may have read before our news committed. */
  busy: boolean;
  /** Committed events wait behind an older transaction still running: look again shortly. */
  waiting: boolean;
}

/** The exact body every attempt sends (reference/resend-api.md §4). */
export function payloadOf(event: Pick<EventRow, 'type' | 'created_at' | 'data'>): string {
  return JSON.stringify({ type: event.type, created_at: isoRequired(event.created_at), data: event.data });
}

// A pass's two reads, as named prepared statements: planned once per connection, not at every pass (~50 a second
// while events flow).
const CURSOR_SQL = `SELECT last_xid::text AS last_xid, last_event_id, pg_snapshot_xmin(pg_current_snapshot())::text AS xmin
  FROM webhook_fanout_cursor WHERE id = 1 FOR UPDATE SKIP LOCKED`;
const EVENTS_AFTER_SQL = `SELECT id, team_id, type, data, created_at, xid::text AS xid FROM events
  WHERE xid IS NOT NULL AND (xid, id) > (?::xid8, ?::uuid) ORDER BY events.xid, events.id LIMIT ?`;

/** One batch. `now` is when the deliveries become due. */
export async function fanOut(db: Knex, now = new Date()): Promise<FanOutResult> {
  return db.transaction(async (trx) => {
    // xmin is taken as the cursor row is read, before the lock gives this transaction an xid of its own: every
    // transaction below it has ended, so the events of the committed ones are visible to the statements after.
    const [cursor] = await prepared<{ last_xid: string; last_event_id: string | null; xmin: string }>(
      trx,
      'pw_webhook_fanout_cursor',
      CURSOR_SQL,
      [],
    );
    if (!cursor) return { events: 0, deliveries: 0, busy: true, waiting: false };
    // One row past the batch, and no xmin bound: what lies beyond xmin says whether to come back soon. The order is
    // the table's columns (`events.xid`): a bare `xid` would name the text column of the select list, whose order
    // is not the cursor's ('10000' < '9999': events skipped) and which no index serves (every pass a full scan).
    const found = await prepared<EventRow>(trx, 'pw_webhook_fanout_events', EVENTS_AFTER_SQL, [
      cursor.last_xid,
      cursor.last_event_id ?? '00000000-0000-0000-0000-000000000000',
      BATCH + 1,
    ]);
    const xmin = BigInt(cursor.xmin);
    const events = found.filter((e) => BigInt(e.xid) < xmin).slice(0, BATCH);
    const waiting = events.length < BATCH && found.length > events.length;
    if (events.length === 0) return { events: 0, deliveries: 0, busy: false, waiting };
    const last = events[events.length - 1];
    events.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

    const teams = [...new Set(events.map((e) => e.team_id))];
    const endpoints: { id: string; team_id: string; events: string[]; status: string }[] = await trx(
      'webhook_endpoints',
    )
      .whereIn('team_id', teams)
      .select('id', 'team_id', 'events', 'status');
    const rows = [];
    for (const event of events) {
      const targets = endpoints.filter(
        (ep) => ep.team_id === event.team_id && ep.events.includes(event.type) && ep.id < event.id,
      );
      if (targets.length === 0) continue;
      const payload = payloadOf(event);
      for (const ep of targets) {
        const parked = ep.status !== 'enabled';
        rows.push({
          id: newId(),
          team_id: event.team_id,
          endpoint_id: ep.id,
          event_id: event.id,
          type: event.type,
          payload,
          status: 'pending',
          parked,
          next_attempt_at: parked ? null : now,
        });
      }
    }
    for (let i = 0; i < rows.length; i += BATCH) {
      await trx('webhook_deliveries')
        .insert(rows.slice(i, i + BATCH))
        .onConflict(['endpoint_id', 'event_id'])
        .ignore();
    }
    await trx('webhook_fanout_cursor').where({ id: 1 }).update({ last_xid: last.xid, last_event_id: last.id });
    return { events: events.length, deliveries: rows.length, busy: false, waiting };
  });
}

/** The look's statement (its plan is tested: an index probe). */
export const EVENTS_DUE_SQL = `SELECT 1 FROM webhook_fanout_cursor c
  CROSS JOIN LATERAL (
    SELECT xid FROM events
    WHERE xid IS NOT NULL AND (xid, id) > (c.last_xid, coalesce(c.last_event_id, '00000000-0000-0000-0000-000000000000'))
    ORDER BY events.xid, events.id LIMIT 1) first
  WHERE c.id = 1 AND first.xid < pg_snapshot_xmin(pg_current_snapshot())`;

/**
 * Whether an event waits to be fanned out: the first one past the cursor, with its transaction below the snapshot's
 * xmin (one index probe; the worker looks every LOOK_MS). An event held back by an older running transaction is not
 * news yet: it is once that transaction ends.
 */
export async function eventsDue(db: Knex): Promise<boolean> {
  return (await prepared(db, 'events-due', EVENTS_DUE_SQL, [])).length > 0;
}

/** Every batch there is. `waiting`/`busy`: what the last batch said, so a caller knows to look again soon. */
export async function fanOutAll(db: Knex, now = new Date()): Promise<FanOutResult> {
  const total: FanOutResult = { events: 0, deliveries: 0, busy: false, waiting: false };
  for (;;) {
    const r = await fanOut(db, now);
    total.events += r.events;
    total.deliveries += r.deliveries;
    if (r.events < BATCH) return { ...total, busy: r.busy, waiting: r.waiting };
  }
}

/**
 * Fans out until no committed event waits behind a running transaction or another fan-out (tests and one-shot
 * runs; the worker is woken instead). Throws after `ms`: a transaction somewhere is being held open.
 */
export async function fanOutSettled(db: Knex, now = new Date(), ms = 10_000): Promise<number> {
  const deadline = Date.now() + ms;
  let deliveries = 0;
  for (;;) {
    const r = await fanOutAll(db, now);
    deliveries += r.deliveries;
    if (!r.waiting && !r.busy) return deliveries;
    if (Date.now() > deadline) throw new Error(`fan-out still held back after ${ms} ms (a long-running transaction?)`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
