// Every operation the api serves. The router, the OpenAPI document and the security suite all read this list.
import { z } from 'zod';
import type { Operation } from './operation.ts';
import { defineOperation } from './operation.ts';
import { apiKeyOperations } from './api-keys.ts';
import { logOperations } from './logs.ts';
import { teamOperations } from './team.ts';
import { operationsOperations } from './operations.ts';
import { notYetOperations } from './not-yet.ts';
import { domainOperations } from './domains.ts';
import { emailOperations } from './emails.ts';
import { emailAttachmentOperations } from './email-attachments.ts';
import { emailShareOperations } from './email-share.ts';
import { emailAttemptOperations } from './email-attempts.ts';
import { emailEventOperations } from './email-events.ts';
import { emailHtmlOperations } from './email-html.ts';
import { emailMetricsOperations } from './email-metrics.ts';
import { domainAutoconfigureOperations } from './domain-autoconfigure.ts';
import { domainClaimOperations } from './domain-claims.ts';
import { domainBrandOperations } from './domain-brand.ts';
import { suppressionOperations } from './suppressions.ts';
import { webhookOperations } from './webhooks.ts';
import { receivingOperations } from './receiving.ts';
import { receivingHtmlOperations } from './receiving-html.ts';
import { unsubscribeOperations } from './unsubscribe.ts';
import { topicOperations } from './topics.ts';
import { contactPropertyOperations } from './contact-properties.ts';
import { contactOperations } from './contacts.ts';
import { contactImportOperations } from './contact-imports.ts';
import { contactSegmentOperations } from './contact-segments.ts';
import { contactTopicOperations } from './contact-topics.ts';
import { segmentOperations } from './segments.ts';
import { audienceOperations } from './audiences.ts';
import { templateOperations } from './templates.ts';
import { broadcastOperations } from './broadcasts.ts';
import { checkOperations } from './checks.ts';
import { templatePreviewOperations } from './template-previews.ts';
import { authOperations } from './auth.ts';
import { mfaOperations } from './auth-mfa.ts';
import { meOperations } from './me.ts';
import { teamsOperations } from './teams.ts';
import { invitationOperations } from './team-invitations.ts';
import { lifecycleOperations } from './team-lifecycle.ts';
import { oauthOperations } from './oauth.ts';
import { mcpOperations } from './mcp.ts';
import { buildOpenApi } from '../openapi.ts';
import { eventDocs } from './event-docs.ts';

const areaOperations: Operation[] = [
  ...operationsOperations,
  ...apiKeyOperations,
  ...teamOperations,
  ...logOperations,
  ...domainOperations,
  ...emailOperations,
  ...emailAttachmentOperations,
  ...emailShareOperations,
  ...emailAttemptOperations,
  ...emailEventOperations,
  ...emailHtmlOperations,
  ...emailMetricsOperations,
  ...domainAutoconfigureOperations,
  ...domainClaimOperations,
  ...domainBrandOperations,
  ...suppressionOperations,
  ...webhookOperations,
  ...receivingOperations,
  ...receivingHtmlOperations,
  ...topicOperations,
  ...unsubscribeOperations,
  ...contactPropertyOperations,
  ...contactOperations,
  ...contactImportOperations,
  ...contactSegmentOperations,
  ...contactTopicOperations,
  ...segmentOperations,
  ...audienceOperations,
  ...broadcastOperations,
  ...templateOperations,
  ...checkOperations,
  ...templatePreviewOperations,
  ...authOperations,
  ...mfaOperations,
  ...meOperations,
  ...teamsOperations,
  ...invitationOperations,
  ...lifecycleOperations,
  ...oauthOperations,
  ...mcpOperations,
  ...notYetOperations,
];

export const API_VERSION = '1.0.0';

const openApiOperation = defineOperation({
  operationId: 'getOpenApi',
  method: 'get',
  path: '/openapi.json',
  tag: 'operations',
  summary: 'The OpenAPI document',
  description:
    'The OpenAPI 3.1 document of this API, generated from the same route declarations the router serves; the reference page at /docs reads it. No API key.',
  permission: 'none',
  scope: null,
  response: z.object({ openapi: z.literal('3.1.0') }).loose(),
  handler: async ({ deps }) => openApiDocument(deps.config.PUBLIC_BASE_URL),
});

export const operations: Operation[] = [...areaOperations, openApiOperation];

let cached: { url: string; doc: Record<string, unknown> } | undefined;

export function openApiDocument(serverUrl: string): { openapi: '3.1.0' } & Record<string, unknown> {
  if (cached?.url !== serverUrl)
    cached = { url: serverUrl, doc: buildOpenApi(operations, { version: API_VERSION, serverUrl }, eventDocs) };
  return cached.doc as { openapi: '3.1.0' } & Record<string, unknown>;
}
