// Fan-out: every event row becomes one delivery per endpoint of its team subscribed to its type (a disabled
// endpoint's delivery is born parked). A cursor row names the newest event done; it advances in the same
// transaction as the deliveries it accounts for, so a crash neither loses an event nor sends it twice.
//
// Event ids are UUID v7 taken at insert time, and a transaction may commit after a younger one: an event is
// only read once its id is SETTLE_MS old, so one committed late is still ahead of the cursor. An endpoint
// receives the events created after it (its id is older than theirs), never the team's history.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { isoRequired } from '../time.ts';

export const SETTLE_MS = 1000;
const BATCH = 500;

interface EventRow {
  id: string;
  team_id: string;
  type: string;
  data: unknown;
  created_at: Date;
}

/** The smallest UUID v7 of a millisecond: every id taken before `ms` sorts below it. */
export function idFloor(ms: number): string {
  const hex = Math.max(0, ms).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`;
}

/** The exact body every attempt sends (reference/resend-api.md §4). */
export function payloadOf(event: Pick<EventRow, 'type' | 'created_at' | 'data'>): string {
  return JSON.stringify({ type: event.type, created_at: isoRequired(event.created_at), data: event.data });
}

/** One batch; answers how many events it consumed (0: nothing new, or another worker holds the cursor). */
export async function fanOut(db: Knex, now = new Date()): Promise<{ events: number; deliveries: number }> {
  return db.transaction(async (trx) => {
    const cursor = await trx('webhook_fanout_cursor').where({ id: 1 }).forUpdate().skipLocked().first();
    if (!cursor) return { events: 0, deliveries: 0 };
    const q = trx<EventRow>('events').where('id', '<', idFloor(now.getTime() - SETTLE_MS)).orderBy('id').limit(BATCH);
    if (cursor.last_event_id) q.where('id', '>', cursor.last_event_id);
    const events = await q;
    if (events.length === 0) return { events: 0, deliveries: 0 };
    const teams = [...new Set(events.map((e) => e.team_id))];
    const endpoints: { id: string; team_id: string; events: string[]; status: string }[] = await trx('webhook_endpoints')
      .whereIn('team_id', teams)
      .select('id', 'team_id', 'events', 'status');
    const rows = [];
    for (const event of events) {
      const targets = endpoints.filter((ep) => ep.team_id === event.team_id && ep.events.includes(event.type) && ep.id < event.id);
      if (targets.length === 0) continue;
      const payload = payloadOf(event);
      for (const ep of targets) {
        const parked = ep.status !== 'enabled';
        rows.push({
          id: newId(), team_id: event.team_id, endpoint_id: ep.id, event_id: event.id, type: event.type, payload,
          status: 'pending', parked, next_attempt_at: parked ? null : now,
        });
      }
    }
    for (let i = 0; i < rows.length; i += 500) {
      await trx('webhook_deliveries').insert(rows.slice(i, i + 500)).onConflict(['endpoint_id', 'event_id']).ignore();
    }
    await trx('webhook_fanout_cursor').where({ id: 1 }).update({ last_event_id: events[events.length - 1].id });
    return { events: events.length, deliveries: rows.length };
  });
}

/** Every batch there is, for a job run. */
export async function fanOutAll(db: Knex, now = new Date()): Promise<number> {
  let total = 0;
  for (;;) {
    const { events, deliveries } = await fanOut(db, now);
    total += deliveries;
    if (events < BATCH) return total;
  }
}
