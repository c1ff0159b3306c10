// Every state change is an event row, written in the same transaction as the change; the webhooks area fans
// them out. `data` is the payload's `data` object (../shared/reference/resend-api.md §4).
import type { Knex } from 'knex';
import { newId } from './ids.ts';
import { prepared } from './db/prepared.ts';

export const eventTypes = [
  'email.sent',
  'email.scheduled',
  'email.delivered',
  'email.delivery_delayed',
  'email.bounced',
  'email.complained',
  'email.opened',
  'email.clicked',
  'email.failed',
  'email.suppressed',
  'email.canceled',
  'email.received',
  'domain.created',
  'domain.updated',
  'domain.deleted',
  'suppression.added',
  'suppression.removed',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'automation.run.started',
  'automation.run.completed',
  'automation.run.failed',
  'inbox.conversation.created',
  'inbox.message.received',
  'inbox.reply.sent',
  'inbox.note.created',
  'inbox.conversation.assigned',
  'inbox.conversation.status_changed',
] as const;

export type EventType = (typeof eventTypes)[number];

export interface EventRow {
  id: string;
  team_id: string;
  type: EventType;
  /** JSON text. */
  data: string;
}

/** The row recordEvent inserts; for a caller that inserts it as part of a larger statement (one round trip). */
export function eventRow(teamId: string, type: EventType, data: Record<string, unknown>): EventRow {
  return { id: newId(), team_id: teamId, type, data: JSON.stringify(data) };
}

/** The insert of `rows` as a query (for a WITH clause); every other column keeps its default. */
export function insertEvents(db: Knex, rows: EventRow[]): Knex.QueryBuilder {
  return db('events').insert(rows);
}

export async function recordEvent(
  db: Knex,
  teamId: string,
  type: EventType,
  data: Record<string, unknown>,
): Promise<string> {
  const row = eventRow(teamId, type, data);
  // One event a call, from many places (a received email, a domain's change, ...): planned once per connection.
  await prepared(db, 'pw_record_event', RECORD_EVENT_SQL, [row.id, row.team_id, row.type, row.data]);
  return row.id;
}

const RECORD_EVENT_SQL = 'insert into events (id, team_id, type, data) values (?, ?, ?, ?::jsonb)';
