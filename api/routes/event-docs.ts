// The events whose payloads the OpenAPI document describes (its `webhooks`): what a webhook endpoint subscribed to
// the type receives, `{type, created_at, data}` (shared/webhooks/fanout.ts payloadOf).
import type { EventDoc } from '../openapi.ts';
import { contactEventData } from './contact-schemas.ts';

const contactEvent = (change: 'created' | 'updated' | 'deleted', when: string): EventDoc => ({
  type: `contact.${change}`,
  summary: `A contact was ${change}`,
  description: `${when} \`data\` is the contact${change === 'deleted' ? ' as it was before the deletion' : ' as it now is'}. Contact imports record none per row.`,
  data: contactEventData,
});

export const eventDocs: EventDoc[] = [
  contactEvent('created', "Recorded when `POST /contacts` (or an audience's contacts path) creates a contact."),
  contactEvent(
    'updated',
    "Recorded when a contact's address, names, `unsubscribed`, property values or segment memberships change (an update that changes nothing records none; deleting a property or a segment records none for its contacts).",
  ),
  contactEvent('deleted', 'Recorded when a contact is deleted.'),
];
