import { z } from 'zod';
import * as topics from '../../shared/topics/topics.ts';
import { notFound } from '../../shared/errors.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { isoRequired } from '../../shared/time.ts';
import { defineOperation } from './operation.ts';
import { deleted, idParams, ref, timestamp } from './schemas.ts';

const topicParams = idParams('topic');

const subscription = z.enum(topics.subscriptions);
const visibility = z.enum(topics.visibilities);

const listItem = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    default_subscription: subscription,
    visibility,
    created_at: timestamp,
  })
  .meta({ id: 'TopicListItem' });

const topic = z.object({ object: z.literal('topic'), ...listItem.shape }).meta({ id: 'Topic' });

// Trimmed: a name is shown on the preference page, where surrounding spaces are never meant.
const name = z
  .string()
  .trim()
  .min(1)
  .max(topics.NAME_MAX_LENGTH)
  .describe(`1-${topics.NAME_MAX_LENGTH} characters, trimmed.`);
const description = z
  .string()
  .max(topics.DESCRIPTION_MAX_LENGTH)
  .nullable()
  .describe(`Up to ${topics.DESCRIPTION_MAX_LENGTH} characters; null for none.`);

// Unknown keys are dropped (zod's default for z.object; CONTRACT: unknown body keys are ignored). The SDK's
// topics.update sends its whole argument as the body, `id` included, and a JavaScript caller's camelCase keys
// (`defaultSubscription`) with it: all of them are ignored. Only `default_subscription` itself is refused, so a
// client that means to change it is told it cannot rather than answered 200 with nothing changed.
const updateBody = z.object({
  name: name.optional(),
  description: description.optional(),
  visibility: visibility
    .optional()
    .describe(
      "`public`: listed on every recipient's preference page (the unsubscribe page); `private`: listed only on the page of an email sent under it.",
    ),
  default_subscription: z
    .never({ error: 'cannot be changed after the topic is created' })
    .optional()
    .describe('Fixed at creation: any value is refused with 422 validation_error.'),
});

function present(row: topics.TopicRow): z.input<typeof listItem> {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    default_subscription: row.default_subscription,
    visibility: row.visibility,
    created_at: isoRequired(row.created_at),
  };
}

const base = { tag: 'topics', permission: 'full_access' } as const;

export const topicOperations = [
  defineOperation({
    ...base,
    operationId: 'createTopic',
    method: 'post',
    path: '/topics',
    summary: 'Create a topic',
    description: 'Create a topic; its `default_subscription` cannot be changed afterwards.',
    scope: 'topics:write',
    status: 201,
    body: z.object({
      name,
      default_subscription: subscription.describe(
        'What a contact who never chose is taken to have chosen; fixed at creation.',
      ),
      description: description.optional(),
      visibility: visibility
        .default('private')
        .describe(
          "`public`: listed on every recipient's preference page (the unsubscribe page); `private`: listed only on the page of an email sent under it.",
        ),
    }),
    response: ref('topic'),
    handler: async ({ auth, body, deps }) => {
      const row = await topics.createTopic(deps.db, auth.team.id, body);
      return { object: 'topic' as const, id: row.id };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'listTopics',
    method: 'get',
    path: '/topics',
    summary: 'List topics',
    description: "List the team's topics, newest first.",
    scope: 'topics:read',
    query: listQuery,
    response: listEnvelope(listItem),
    handler: async ({ auth, query, deps }) => toList(await topics.listTopics(deps.db, auth.team.id, query), present),
  }),
  defineOperation({
    ...base,
    operationId: 'getTopic',
    method: 'get',
    path: '/topics/{id}',
    summary: 'Retrieve a topic',
    description: 'Retrieve a topic: its name, description, default subscription and visibility.',
    scope: 'topics:read',
    params: topicParams,
    response: topic,
    handler: async ({ auth, params, deps }) => {
      const row = await topics.getTopic(deps.db, auth.team.id, params.id);
      if (!row) throw notFound('Topic');
      return { object: 'topic' as const, ...present(row) };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'updateTopic',
    method: 'patch',
    path: '/topics/{id}',
    summary: 'Update a topic',
    description:
      "Change a topic's name, description or visibility; other keys are ignored, except `default_subscription`, which is refused.",
    scope: 'topics:write',
    params: topicParams,
    body: updateBody,
    response: ref('topic'),
    handler: async ({ auth, params, body, deps }) => {
      const row = await topics.updateTopic(deps.db, auth.team.id, params.id, {
        name: body.name,
        description: body.description,
        visibility: body.visibility,
      });
      if (!row) throw notFound('Topic');
      return { object: 'topic' as const, id: row.id };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'deleteTopic',
    method: 'delete',
    path: '/topics/{id}',
    summary: 'Delete a topic',
    description: "Delete a topic, and every address's choice for it; emails sent under it keep its id.",
    scope: 'topics:write',
    params: topicParams,
    response: deleted('topic'),
    handler: async ({ auth, params, deps }) => {
      const row = await topics.deleteTopic(deps.db, auth.team.id, params.id);
      if (!row) throw notFound('Topic');
      return { object: 'topic' as const, id: row.id, deleted: true as const };
    },
  }),
];
