import { z } from 'zod';
import type { Context } from 'koa';
import type { Caller, SendInput } from '../../shared/emails/prepare.ts';
import { acceptSends } from '../../shared/emails/accept.ts';
import { cancel, getEmail, listEmails, reschedule } from '../../shared/emails/store.ts';
import { lastEvents, presentEmail, presentListItem } from '../../shared/emails/present.ts';
import { parseScheduledAt, ScheduleError } from '../../shared/emails/schedule-phrase.ts';
import { ServiceError } from '../../shared/errors.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { parseBody } from '../middleware/validate.ts';
import { defineOperation, type Auth } from './operation.ts';
import { ref, timestamp } from './schemas.ts';

const addresses = z.union([z.string(), z.array(z.string())]);
const attachment = z.object({
  content: z
    .union([z.string().describe('base64'), z.object({ type: z.literal('Buffer'), data: z.array(z.number().int()) })])
    .nullish(),
  filename: z.union([z.string(), z.literal(false)]).nullish(),
  path: z
    .string()
    .nullish()
    .describe(
      'An https URL, fetched once at acceptance (public addresses only, no redirects, within the 40 MB message; 422 `invalid_attachment` naming `attachments.<i>.path` in `errors`, the reason in the message, when it cannot be); the filename defaults to its last path segment',
    ),
  content_type: z.string().nullish(),
  content_id: z.string().nullish().describe('Makes the attachment inline, for `cid:` references'),
});

const valueOf = (body: unknown, field: string): unknown =>
  body !== null && typeof body === 'object' ? (body as Record<string, unknown>)[field] : undefined;
const hasTemplate = (body: unknown): boolean => valueOf(body, 'template') != null;

export const sendBody = z
  .object({
    from: z.string().max(1000).optional().describe('Required unless `template` is given'),
    to: addresses,
    subject: z.string().optional().describe('Required unless `template` is given'),
    cc: addresses.nullish(),
    bcc: addresses.nullish(),
    reply_to: addresses.nullish(),
    html: z.string().nullish(),
    text: z.string().nullish().describe('Generated from html when absent; "" for none'),
    headers: z.record(z.string(), z.string()).nullish(),
    attachments: z.array(attachment).nullish(),
    tags: z.array(z.object({ name: z.string(), value: z.string() })).nullish(),
    scheduled_at: z.string().nullish().describe('ISO 8601, or a phrase such as `in 2 hours`, `tomorrow at 9am` (UTC)'),
    topic_id: z.string().nullish(),
    template: z.object({ id: z.string(), variables: z.record(z.string(), z.unknown()).optional() }).nullish(),
  })
  // from and subject may come from a template (resend-api.md §2); without one they are required, and say so as
  // a missing field would (422 missing_required_field, api/middleware/validate.ts). `when`: checked even beside
  // other issues, so every missing field is named at once; the input is then unparsed, hence the guards.
  .refine((b) => hasTemplate(b) || valueOf(b, 'from') !== undefined, {
    path: ['from'],
    message: 'Required unless `template` is given',
    when: () => true,
  })
  .refine((b) => hasTemplate(b) || valueOf(b, 'subject') !== undefined, {
    path: ['subject'],
    message: 'Required unless `template` is given',
    when: () => true,
  })
  .meta({ id: 'SendEmailRequest' });

const email = z
  .object({
    object: z.literal('email'),
    id: z.uuid(),
    message_id: z.string(),
    from: z.string(),
    to: z.array(z.string()),
    cc: z.array(z.string()).nullable(),
    bcc: z.array(z.string()).nullable(),
    reply_to: z.array(z.string()).nullable(),
    subject: z.string(),
    html: z.string().nullable(),
    text: z.string().nullable(),
    created_at: timestamp,
    scheduled_at: timestamp.nullable(),
    last_event: z.enum(lastEvents),
    tags: z.array(z.object({ name: z.string(), value: z.string() })),
    topic_id: z.string().nullable(),
  })
  .meta({ id: 'Email' });

const emailParams = z.object({ email_id: z.uuid() });
const SEND_BODY_LIMIT = 56 * 1024 * 1024; // 40 MB of attachments once base64 and JSON have had their say

const caller = (auth: Auth, ctx: Context): Caller => ({
  team: auth.team,
  key: auth.key,
  source: 'api',
  requestId: ctx.state.requestId,
});

const base = { tag: 'emails', permission: 'full_access' } as const;

export const emailOperations = [
  defineOperation({
    ...base,
    operationId: 'sendEmail',
    method: 'post',
    path: '/emails',
    summary: 'Send an email. Answers once the email is committed; delivery follows.',
    permission: 'sending_access',
    scope: 'emails:send',
    idempotent: 'answered-in-commit',
    bodyLimit: SEND_BODY_LIMIT,
    body: sendBody,
    response: z.object({ id: z.uuid() }),
    handler: async ({ auth, body, deps, ctx, reservation }) =>
      (await acceptSends(deps, caller(auth, ctx), [body as SendInput], {
        now: new Date(),
        read: (input) => ({ input }),
        batch: null,
        reservation,
      })) as { id: string },
  }),
  defineOperation({
    ...base,
    operationId: 'sendBatch',
    method: 'post',
    path: '/emails/batch',
    summary:
      'Send up to 100 emails. `x-batch-validation: strict` (default) refuses all on any error; `permissive` sends the valid ones.',
    permission: 'sending_access',
    scope: 'emails:send',
    idempotent: 'answered-in-commit',
    bodyLimit: SEND_BODY_LIMIT,
    body: z.array(z.record(z.string(), z.unknown()).describe('A SendEmailRequest')).min(1).max(100),
    response: z.object({
      data: z.array(z.object({ id: z.uuid() })),
      errors: z.array(z.object({ index: z.number().int(), message: z.string() })).optional(),
    }),
    handler: async ({ auth, body, deps, ctx, reservation }) => {
      const mode = (ctx.get('x-batch-validation') || 'strict').toLowerCase();
      if (mode !== 'strict' && mode !== 'permissive')
        throw new ServiceError('validation_error', '`x-batch-validation` is `strict` or `permissive`.', {
          status: 400,
        });
      const read = (item: unknown) => ({ input: parseBody(sendBody, item) as SendInput });
      return (await acceptSends(deps, caller(auth, ctx), body, {
        now: new Date(),
        read,
        batch: mode,
        reservation,
      })) as {
        data: { id: string }[];
      };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'listEmails',
    method: 'get',
    path: '/emails',
    summary: 'List sent emails, newest first.',
    scope: 'emails:read',
    query: listQuery,
    response: listEnvelope(email.omit({ html: true, text: true, tags: true })),
    handler: async ({ auth, query, deps }) => {
      const page = await listEmails(deps.db, auth.team.id, query);
      return toList(page, presentListItem);
    },
  }),
  defineOperation({
    ...base,
    operationId: 'getEmail',
    method: 'get',
    path: '/emails/{email_id}',
    summary: 'Retrieve a sent email with its last event.',
    scope: 'emails:read',
    params: emailParams,
    response: email,
    handler: async ({ auth, params, deps }) => presentEmail(await getEmail(deps.db, auth.team.id, params.email_id)),
  }),
  defineOperation({
    ...base,
    operationId: 'updateEmail',
    method: 'patch',
    path: '/emails/{email_id}',
    summary: 'Reschedule a scheduled email that has not been released yet.',
    scope: 'emails:write',
    params: emailParams,
    body: z.object({ scheduled_at: z.string() }),
    response: ref('email'),
    handler: async ({ auth, params, body, deps }) => {
      let when: Date;
      try {
        when = parseScheduledAt(body.scheduled_at);
      } catch (err) {
        if (err instanceof ScheduleError)
          throw new ServiceError(
            'validation_error',
            `Invalid \`scheduled_at\`: \`${body.scheduled_at}\` ${err.message}.`,
            { errors: [{ path: 'scheduled_at', message: err.message }] },
          );
        throw err;
      }
      const row = await reschedule(deps.db, auth.team.id, params.email_id, when);
      return { object: 'email' as const, id: row.id };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'cancelEmail',
    method: 'post',
    path: '/emails/{email_id}/cancel',
    summary: 'Cancel a scheduled email that has not been released yet.',
    scope: 'emails:write',
    params: emailParams,
    response: ref('email'),
    handler: async ({ auth, params, deps }) => {
      const row = await cancel(deps.db, auth.team.id, params.email_id);
      return { object: 'email' as const, id: row.id };
    },
  }),
];
