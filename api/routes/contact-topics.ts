// A contact's topic choices: the team's topics with what the contact's address chose (or the topic's default),
// and the choices written. The same choices the unsubscribe and preference pages record.
import { z } from 'zod';
import { findContact } from '../../shared/contacts/contacts.ts';
import { listContactTopics, setContactTopics } from '../../shared/contacts/topic-choices.ts';
import { notFound } from '../../shared/errors.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { subscriptions } from '../../shared/topics/topics.ts';
import { defineOperation } from './operation.ts';
import { contactParams, topicChoice, topicRefs } from './contact-schemas.ts';

const subscription = z.enum(subscriptions);

const topicItem = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    subscription: subscription.describe("The address's own choice, else the topic's `default_subscription`."),
  })
  .meta({ id: 'ContactTopic' });

const choices = z.array(topicChoice).max(100);
const describedChoices = choices.describe('Topic choices; a topic named twice takes the last choice.');
// The SDK sends the array itself as the body; `{topics: [...]}` is the documented form. Both are taken.
const body = z.preprocess((v) => (Array.isArray(v) ? { topics: v } : v), z.object({ topics: describedChoices }));
const bodyDoc = z.union([
  z.object({ topics: describedChoices }).describe('The choices under `topics`.'),
  describedChoices,
]);

const base = { tag: 'contacts', permission: 'full_access' } as const;

export const contactTopicOperations = [
  defineOperation({
    ...base,
    operationId: 'listContactTopics',
    method: 'get',
    path: '/contacts/{id_or_email}/topics',
    summary: "List a contact's topics",
    description:
      "Every topic of the team, newest first, with the contact's subscription: its own choice, else the topic's default.",
    scope: 'contacts:read',
    params: contactParams,
    query: listQuery,
    response: listEnvelope(topicItem),
    handler: async ({ auth, params, query, deps }) => {
      const contact = await findContact(deps.db, auth.team.id, params.id_or_email);
      if (!contact) throw notFound('Contact');
      return toList(await listContactTopics(deps.db, contact, query), (row) => row);
    },
  }),
  defineOperation({
    ...base,
    operationId: 'updateContactTopics',
    method: 'patch',
    path: '/contacts/{id_or_email}/topics',
    summary: "Update a contact's topics",
    description:
      "Record the contact's choice for each topic named (others keep theirs), all or none: a topic not of the team is 422 naming it. A send under a topic reaches the address only while it is subscribed.",
    scope: 'contacts:write',
    params: contactParams,
    body,
    bodyDoc,
    // `id` is the contact's too: the SDK's type of this answer is `{ id }`; Resend's documented one the rest.
    response: z
      .object({
        object: z.literal('contact_topics'),
        id: z.uuid().describe("The contact's id (as `contact_id`)"),
        contact_id: z.uuid(),
        topics: z.array(z.object({ id: z.uuid(), subscription })),
      })
      .meta({ id: 'ContactTopics' }),
    handler: async ({ auth, params, body, deps }) => {
      const contact = await findContact(deps.db, auth.team.id, params.id_or_email);
      if (!contact) throw notFound('Contact');
      const topics = await setContactTopics(deps.db, contact, topicRefs(body.topics));
      await deps.contactJobs.contactsChanged(auth.team.id);
      return { object: 'contact_topics' as const, id: contact.id, contact_id: contact.id, topics };
    },
  }),
];
