import { z } from 'zod';
import * as endpoints from '../../shared/webhooks/endpoints.ts';
import * as deliveries from '../../shared/webhooks/deliveries.ts';
import type { DeliveryRow } from '../../shared/webhooks/deliver.ts';
import { eventTypes } from '../../shared/events.ts';
import { notFound } from '../../shared/errors.ts';
import { secretsKey } from '../../shared/secrets.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { iso, isoRequired } from '../../shared/time.ts';
import { defineOperation } from './operation.ts';
import { deleted, pathId, ref, timestamp } from './schemas.ts';
import type { ApiDeps } from '../deps.ts';

const endpointRules = (config: ApiDeps['config']): endpoints.EndpointRules => ({
  allowHttp: config.WEBHOOK_ALLOW_HTTP,
  allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
});

const eventType = z.enum(eventTypes);
const events = z.array(eventType).min(1).max(eventTypes.length).describe('The event types this endpoint receives.');
const endpointUrl = z
  .string()
  .min(1)
  .max(endpoints.ENDPOINT_MAX_LENGTH)
  .describe(
    'Where events are POSTed: https (http only when the operator allows it); private addresses are refused at send time.',
  );
const status = z.enum(endpoints.endpointStatuses);
const deliveryStatus = z.enum(['pending', 'attempting', 'success', 'failed']);

const listItem = z
  .object({ id: z.uuid(), endpoint: z.string(), events: z.array(eventType), status, created_at: timestamp })
  .meta({ id: 'WebhookListItem' });
const detail = z
  .object({
    object: z.literal('webhook'),
    ...listItem.shape,
    signing_secret: z.string().describe('Masked: only the last four characters show.'),
  })
  .meta({ id: 'WebhookDetail' });
const secret = z
  .object({
    object: z.literal('webhook'),
    id: z.uuid(),
    signing_secret: z.string().describe('`whsec_…`: shown only here; store it now.'),
  })
  .meta({ id: 'WebhookSecret' });
const eventItem = z
  .object({ id: z.uuid(), type: eventType, created_at: timestamp, status: deliveryStatus })
  .meta({ id: 'WebhookEventListItem' });
const webhookEvent = z
  .object({
    object: z.literal('webhook_event'),
    ...eventItem.shape,
    attempt_count: z.number().int(),
    next_attempt_at: timestamp.nullable(),
    last_http_status: z.number().int().nullable(),
    payload: z.unknown().optional().describe('The body as sent: {type, created_at, data}.'),
  })
  .meta({ id: 'WebhookEvent' });
const attempt = z
  .object({
    id: z.uuid(),
    attempt_number: z.number().int(),
    http_status_code: z.number().int().nullable(),
    response: z.string().nullable().describe('The first 1 KB of the response body.'),
    duration_ms: z.number().int(),
    error: z.string().nullable(),
    sent_at: timestamp,
  })
  .meta({ id: 'WebhookAttempt' });
const parkedItem = z
  .object({
    id: z.uuid(),
    type: eventType,
    created_at: timestamp,
    status: deliveryStatus,
    attempt_count: z.number().int(),
    last_http_status: z.number().int().nullable(),
  })
  .meta({ id: 'ParkedWebhookEvent' });
const parkedDelivery = z
  .object({
    object: z.literal('parked_delivery'),
    delivered: z.number().int().describe('Parked events handed back to delivery by this call.'),
    remaining: z.number().int().describe('Events still parked after the call.'),
    stopped_reason: z
      .enum(['rate_limit_exceeded'])
      .nullable()
      .describe(`Set when the call stopped at its limit (${deliveries.PARKED_PER_CALL}) with events left.`),
  })
  .meta({ id: 'ParkedDelivery' });

const webhookParams = z.object({ webhook_id: pathId('webhook endpoint') });
const eventParams = webhookParams.extend({ event_id: pathId('event') });

function presentItem(row: endpoints.EndpointRow): z.input<typeof listItem> {
  return {
    id: row.id,
    endpoint: row.endpoint,
    events: row.events,
    status: row.status,
    created_at: isoRequired(row.created_at),
  };
}
function presentEventItem(row: DeliveryRow) {
  return {
    id: row.id,
    type: row.type as z.infer<typeof eventType>,
    created_at: isoRequired(row.created_at),
    status: row.status,
  };
}
function presentParked(row: DeliveryRow) {
  return { ...presentEventItem(row), attempt_count: row.attempt_count, last_http_status: row.last_http_status };
}

async function endpointOf(deps: ApiDeps, teamId: string, id: string) {
  const row = await endpoints.findEndpoint(deps.db, teamId, id);
  if (!row) throw notFound('Webhook');
  return row;
}
async function deliveryOf(deps: ApiDeps, teamId: string, params: { webhook_id: string; event_id: string }) {
  const endpoint = await endpointOf(deps, teamId, params.webhook_id);
  const delivery = await deliveries.findDelivery(deps.db, endpoint.id, params.event_id);
  if (!delivery) throw notFound('Webhook event');
  return { endpoint, delivery };
}

const read = { tag: 'webhooks', permission: 'full_access', scope: 'webhooks:read' } as const;
const write = { tag: 'webhooks', permission: 'full_access', scope: 'webhooks:write' } as const;

export const webhookOperations = [
  defineOperation({
    ...write,
    operationId: 'createWebhook',
    method: 'post',
    path: '/webhooks',
    summary: 'Create a webhook endpoint',
    description: 'Create an endpoint; the answer holds its signing secret, the only time it is shown in full.',
    status: 201,
    body: z.object({ endpoint: endpointUrl, events }),
    response: secret,
    handler: async ({ auth, body, deps }) => {
      const { row, secret } = await endpoints.createEndpoint(
        deps.db,
        secretsKey(deps.config),
        auth.team.id,
        body,
        endpointRules(deps.config),
      );
      return { object: 'webhook' as const, id: row.id, signing_secret: secret };
    },
  }),
  defineOperation({
    ...read,
    operationId: 'listWebhooks',
    method: 'get',
    path: '/webhooks',
    summary: 'List webhook endpoints',
    description: "List the team's endpoints, newest first.",
    query: listQuery,
    response: listEnvelope(listItem),
    handler: async ({ auth, query, deps }) =>
      toList(await endpoints.listEndpoints(deps.db, auth.team.id, query), presentItem),
  }),
  defineOperation({
    ...read,
    operationId: 'getWebhook',
    method: 'get',
    path: '/webhooks/{webhook_id}',
    summary: 'Retrieve a webhook endpoint',
    description: 'Retrieve an endpoint; its signing secret is masked.',
    params: webhookParams,
    response: detail,
    handler: async ({ auth, params, deps }) => {
      const row = await endpointOf(deps, auth.team.id, params.webhook_id);
      return {
        object: 'webhook' as const,
        ...presentItem(row),
        signing_secret: endpoints.maskSecret(row.secret_last4),
      };
    },
  }),
  defineOperation({
    ...write,
    operationId: 'updateWebhook',
    method: 'patch',
    path: '/webhooks/{webhook_id}',
    summary: 'Update a webhook endpoint',
    description: 'Change the URL, the event types or the status; disabling parks what was still to be sent.',
    params: webhookParams,
    body: z.object({
      endpoint: endpointUrl.optional(),
      events: events.optional(),
      status: status
        .optional()
        .describe(
          '`disabled` stops deliveries and parks what was still to be sent; `enabled` delivers new events again (parked ones wait for POST /webhooks/{webhook_id}/parked/deliver)',
        ),
    }),
    response: ref('webhook'),
    handler: async ({ auth, params, body, deps }) => {
      const row = await endpoints.updateEndpoint(
        deps.db,
        auth.team.id,
        params.webhook_id,
        body,
        endpointRules(deps.config),
      );
      if (!row) throw notFound('Webhook');
      return { object: 'webhook' as const, id: row.id };
    },
  }),
  defineOperation({
    ...write,
    operationId: 'deleteWebhook',
    method: 'delete',
    path: '/webhooks/{webhook_id}',
    summary: 'Delete a webhook endpoint',
    description: 'Delete an endpoint with its events and attempts.',
    params: webhookParams,
    response: deleted('webhook'),
    handler: async ({ auth, params, deps }) => {
      if (!(await endpoints.deleteEndpoint(deps.db, auth.team.id, params.webhook_id))) throw notFound('Webhook');
      return { object: 'webhook' as const, id: params.webhook_id, deleted: true as const };
    },
  }),
  defineOperation({
    ...write,
    operationId: 'rotateWebhookSigningSecret',
    method: 'post',
    path: '/webhooks/{webhook_id}/signing-secret/rotate',
    summary: 'Rotate the signing secret',
    description: 'Replace the signing secret; the new one signs from the next attempt on and is shown only here.',
    params: webhookParams,
    response: secret,
    handler: async ({ auth, params, deps }) => {
      const rotated = await endpoints.rotateSecret(deps.db, secretsKey(deps.config), auth.team.id, params.webhook_id);
      if (!rotated) throw notFound('Webhook');
      return { object: 'webhook' as const, id: rotated.row.id, signing_secret: rotated.secret };
    },
  }),
  defineOperation({
    ...read,
    operationId: 'listWebhookEvents',
    method: 'get',
    path: '/webhooks/{webhook_id}/events',
    summary: "List an endpoint's events",
    description: 'List the events sent or to be sent to an endpoint, newest first.',
    params: webhookParams,
    query: listQuery,
    response: listEnvelope(eventItem),
    handler: async ({ auth, params, query, deps }) => {
      const endpoint = await endpointOf(deps, auth.team.id, params.webhook_id);
      return toList(await deliveries.listDeliveries(deps.db, endpoint.id, query), presentEventItem);
    },
  }),
  defineOperation({
    ...read,
    operationId: 'getWebhookEvent',
    method: 'get',
    path: '/webhooks/{webhook_id}/events/{event_id}',
    summary: "Retrieve an endpoint's event",
    description: 'Retrieve one event of an endpoint with its delivery state and payload.',
    params: eventParams,
    response: webhookEvent,
    handler: async ({ auth, params, deps }) => {
      const { delivery } = await deliveryOf(deps, auth.team.id, params);
      return {
        object: 'webhook_event' as const,
        ...presentEventItem(delivery),
        attempt_count: delivery.attempt_count,
        next_attempt_at: iso(delivery.next_attempt_at),
        last_http_status: delivery.last_http_status,
        payload: JSON.parse(delivery.payload),
      };
    },
  }),
  defineOperation({
    ...write,
    operationId: 'replayWebhookEvent',
    method: 'post',
    path: '/webhooks/{webhook_id}/events/{event_id}/replay',
    summary: 'Replay an event',
    description: 'Send an event again, within a second or so; it is signed anew under the current secret.',
    params: eventParams,
    response: ref('webhook_event'),
    handler: async ({ auth, params, deps }) => {
      const { endpoint, delivery } = await deliveryOf(deps, auth.team.id, params);
      await deliveries.replay(deps.db, endpoint, delivery);
      return { object: 'webhook_event' as const, id: delivery.id };
    },
  }),
  defineOperation({
    ...read,
    operationId: 'listWebhookEventAttempts',
    method: 'get',
    path: '/webhooks/{webhook_id}/events/{event_id}/attempts',
    summary: "List an event's delivery attempts",
    description: 'List the delivery attempts of one event, newest first.',
    params: eventParams,
    query: listQuery,
    response: listEnvelope(attempt),
    handler: async ({ auth, params, query, deps }) => {
      const { delivery } = await deliveryOf(deps, auth.team.id, params);
      return toList(await deliveries.listAttempts(deps.db, delivery.id, query), (a) => ({
        id: a.id,
        attempt_number: a.attempt_number,
        http_status_code: a.http_status_code,
        response: a.response,
        duration_ms: a.duration_ms,
        error: a.error,
        sent_at: isoRequired(a.sent_at),
      }));
    },
  }),
  defineOperation({
    ...read,
    operationId: 'listParkedWebhookEvents',
    method: 'get',
    path: '/webhooks/{webhook_id}/parked',
    summary: 'List parked events',
    description:
      'List the events parked on an endpoint (failed after every retry, or held while it was disabled), newest first.',
    params: webhookParams,
    query: listQuery,
    response: listEnvelope(parkedItem),
    handler: async ({ auth, params, query, deps }) => {
      const endpoint = await endpointOf(deps, auth.team.id, params.webhook_id);
      return toList(await deliveries.listDeliveries(deps.db, endpoint.id, query, true), presentParked);
    },
  }),
  defineOperation({
    ...write,
    operationId: 'deliverParkedWebhookEvents',
    method: 'post',
    path: '/webhooks/{webhook_id}/parked/deliver',
    summary: 'Deliver parked events',
    description: `Hand the parked events of an enabled endpoint back to delivery, oldest first, at most ${deliveries.PARKED_PER_CALL} a call.`,
    params: webhookParams,
    response: parkedDelivery,
    handler: async ({ auth, params, deps }) => {
      const endpoint = await endpointOf(deps, auth.team.id, params.webhook_id);
      return { object: 'parked_delivery' as const, ...(await deliveries.deliverParked(deps.db, endpoint)) };
    },
  }),
];
