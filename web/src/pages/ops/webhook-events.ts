// The event types an endpoint may subscribe to, grouped for the form. The list is checked against the api's own enum:
// a type the api adds or drops is a type error here (tsc -p web).
import type { Schemas } from '../../api/client';

export type EventType = Schemas['WebhookListItem']['events'][number];

export const EVENT_TYPES = [
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
] as const satisfies readonly EventType[];

// Every type of the api is listed: this line fails to compile when one is missing.
const complete: Exclude<EventType, (typeof EVENT_TYPES)[number]> extends never ? true : false = true;
void complete;

/** The types grouped by what they are about (`email`, `domain`, …), in the api's order. */
export function groups(): [string, EventType[]][] {
  const by = new Map<string, EventType[]>();
  for (const t of EVENT_TYPES) {
    const g = t.split('.')[0];
    by.set(g, [...(by.get(g) ?? []), t]);
  }
  return [...by];
}
