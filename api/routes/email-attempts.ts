// A sent email's delivery attempts: each try at one recipient domain with its SMTP transcript (issue: "the SMTP
// transcript of every attempt is kept and readable through the API").
import { z } from 'zod';
import { getAttempt, listAttempts, presentAttempt } from '../../shared/emails/attempts.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { defineOperation } from './operation.ts';
import { pathId, timestamp } from './schemas.ts';

const attempt = z
  .object({
    object: z.literal('delivery_attempt'),
    id: z.uuid(),
    email_id: z.uuid(),
    domain: z
      .string()
      .describe('The recipient domain this attempt delivered to (the simulator domain for simulator addresses)'),
    recipients: z.array(z.string()).describe('The recipients of that domain the attempt settled'),
    mx_host: z
      .string()
      .nullable()
      .describe(
        'The MX host that answered, or the last one tried; null when no connection was made (the DNS answer settled it, the simulator, or a local error)',
      ),
    tls: z.boolean().describe('The session was encrypted with STARTTLS'),
    outcome: z
      .enum(['delivered', 'deferred', 'bounced', 'partial'])
      .describe('`partial`: the recipients did not all end alike'),
    response: z.string().nullable().describe('The reply that decided the first recipient'),
    started_at: timestamp,
    duration_ms: z.number().int(),
    transcript: z
      .string()
      .nullable()
      .describe(
        'Every SMTP command (`C: `) and reply (`S: `) of the attempt and what the MTA noted (`* `): connections, STARTTLS, hosts tried; never the message itself',
      ),
  })
  .meta({ id: 'DeliveryAttempt' });

const emailParams = z.object({ email_id: pathId('sent email') });
const attemptParams = emailParams.extend({ attempt_id: pathId('delivery attempt') });
const base = { tag: 'emails', permission: 'full_access', scope: 'emails:read', method: 'get' } as const;

export const emailAttemptOperations = [
  defineOperation({
    ...base,
    operationId: 'listEmailAttempts',
    path: '/emails/{email_id}/attempts',
    summary: 'List delivery attempts',
    description:
      "List a sent email's delivery attempts, newest first, each with its SMTP transcript; cursors are attempt ids.",
    params: emailParams,
    query: listQuery,
    response: listEnvelope(attempt),
    handler: async ({ auth, params, query, deps }) =>
      toList(await listAttempts(deps.db, auth.team.id, params.email_id, query), presentAttempt),
  }),
  defineOperation({
    ...base,
    operationId: 'getEmailAttempt',
    path: '/emails/{email_id}/attempts/{attempt_id}',
    summary: 'Retrieve a delivery attempt',
    description: 'Retrieve one delivery attempt of a sent email with its SMTP transcript.',
    params: attemptParams,
    response: attempt,
    handler: async ({ auth, params, deps }) =>
      presentAttempt(await getAttempt(deps.db, auth.team.id, params.email_id, params.attempt_id)),
  }),
];
