import { z } from 'zod';
import type { Context } from 'koa';
import { MAX_RECIPIENTS, type Caller, type SendInput } from '../../shared/emails/prepare.ts';
import { acceptSends } from '../../shared/emails/accept.ts';
import { cancel, getEmail, listEmails, reschedule } from '../../shared/emails/store.ts';
import { lastEvents, presentEmail, presentListItem } from '../../shared/emails/present.ts';
import { parseScheduledAt, ScheduleError } from '../../shared/emails/schedule-phrase.ts';
import { ServiceError } from '../../shared/errors.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { parseBody } from '../middleware/validate.ts';
import { defineOperation, type Auth } from './operation.ts';
import { mailSearch, pathId, ref, timestamp } from './schemas.ts';
import { batchExamples, sendExamples } from './email-examples.ts';

const addresses = z.union([z.string(), z.array(z.string())]);
const attachment = z.object({
  content: z
    .union([
      z.string().describe('The bytes, base64'),
      z
        .object({
          type: z.literal('Buffer').describe('Always `Buffer`'),
          data: z.array(z.number().int()).describe('The bytes, each 0-255'),
        })
        .describe("A Node.js Buffer as JSON.stringify writes it (what the SDK sends for a Buffer's content)"),
    ])
    .nullish()
    .describe('The file itself; give `content` or `path`'),
  filename: z
    .union([z.string(), z.literal(false)])
    .nullish()
    .describe('The name the recipient sees, one line without slashes, up to 255 characters; also picks the type'),
  path: z
    .string()
    .nullish()
    .describe(
      'An https URL, fetched once at acceptance (public addresses only, no redirects, within the 40 MB message; 422 `invalid_attachment` naming `attachments.<i>.path` in `errors`, the reason in the message, when it cannot be); the filename defaults to its last path segment',
    ),
  content_type: z
    .string()
    .nullish()
    .describe("The media type; default: guessed from the filename's extension, else application/octet-stream"),
  content_id: z.string().nullish().describe('Makes the attachment inline, for `cid:` references'),
});

const valueOf = (body: unknown, field: string): unknown =>
  body !== null && typeof body === 'object' ? (body as Record<string, unknown>)[field] : undefined;
const hasTemplate = (body: unknown): boolean => valueOf(body, 'template') != null;

export const sendBody = z
  .object({
    from: z
      .string()
      .max(1000)
      .optional()
      .describe(
        'The sender, `you@example.com` or `Your Name <you@example.com>`, at a verified domain of the team; required unless `template` is given',
      ),
    to: addresses.describe(`One address or a list; to, cc and bcc hold at most ${MAX_RECIPIENTS} together`),
    subject: z.string().optional().describe('Required unless `template` is given'),
    cc: addresses.nullish().describe('Copied recipients, one address or a list'),
    bcc: addresses.nullish().describe('Blind-copied recipients, one address or a list; no header names them'),
    reply_to: addresses.nullish().describe(`Where replies go, one address or a list (at most ${MAX_RECIPIENTS})`),
    html: z.string().nullish().describe('The HTML body; give html, text or both'),
    text: z.string().nullish().describe('Generated from html when absent; "" for none'),
    headers: z
      .record(z.string(), z.string())
      .nullish()
      .describe(
        'Extra header fields, name to one-line value (up to 2000 characters); fields the platform sets (From, To, Message-ID, DKIM-Signature, ...) are refused',
      ),
    attachments: z.array(attachment).nullish().describe('Files, 40 MB for the whole message'),
    tags: z
      .array(
        z.object({
          name: z.string().describe('1-256 ASCII letters, digits, `_` or `-`'),
          value: z.string().describe('1-256 ASCII letters, digits, `_` or `-`'),
        }),
      )
      .nullish()
      .describe('Up to 75 name/value pairs of your own, kept with the email (GET /emails/{email_id} answers them)'),
    scheduled_at: z.string().nullish().describe('ISO 8601, or a phrase such as `in 2 hours`, `tomorrow at 9am` (UTC)'),
    topic_id: z
      .string()
      .nullish()
      .describe(
        'A topic of the team: only its subscribers are sent to (the others, and contacts unsubscribed from everything, are suppressed), each copy with its own one-click unsubscribe link',
      ),
    template: z
      .object({
        id: z.string().describe("The template's id or alias"),
        variables: z
          .record(z.string(), z.unknown())
          .optional()
          .describe("Values for the template's variables, each of its declared type (up to 1 MB as JSON)"),
      })
      .nullish()
      .describe(
        "Send a template's published version instead of html and text: its html and text rendered with `variables`, its from, subject and reply_to unless given here. An unknown template, one never published, a missing value (no fallback) or a value of the wrong type is 422 naming it",
      ),
    acknowledge_checks: z
      .boolean()
      .nullish()
      .describe(
        'A send under a topic (a campaign send) runs the pre-send checks and is refused (422, `details.checks`) while one fails; `true` sends anyway. Other sends never run them',
      ),
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
    template_id: z
      .uuid()
      .nullable()
      .describe(
        'The template the email was sent from (`template.id` of the send, as its id even when the send named an alias); null for a send without one.',
      ),
  })
  .meta({ id: 'Email' });

const emailParams = z.object({ email_id: pathId('sent email') });
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
    summary: 'Send an email',
    description: [
      `Send an email to up to ${MAX_RECIPIENTS} recipients (to, cc and bcc together). The answer, the email's id, comes once the email, its recipients, attachments and first events are committed; delivery through the platform's own MTA follows, and GET /emails/{email_id}, its delivery attempts and webhooks tell how it went.`,
      '',
      '- `from` is at a domain of the team whose sending is enabled and verified (else 403).',
      '- A suppressed recipient is not sent to (an `email.suppressed` event says why); when no recipient is usable the send is 422.',
      '- `scheduled_at` holds the email until then; PATCH /emails/{email_id} and POST /emails/{email_id}/cancel change that while it waits.',
      '- With an `Idempotency-Key`, a retry is safe: the same key and body within 24 hours answer the first answer and send nothing again.',
      '',
      '`delivered@`, `bounced@`, `complained@`, `delayed@` and `suppressed@` at the simulator domain (SIMULATOR_DOMAIN) behave as their names say, without the network: the examples send to them.',
    ].join('\n'),
    permission: 'sending_access',
    scope: 'emails:send',
    idempotent: 'answered-in-commit',
    bodyLimit: SEND_BODY_LIMIT,
    body: sendBody,
    examples: sendExamples,
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
    summary: 'Send a batch of emails',
    description: [
      'Send up to 100 emails in one request, each item a body as POST /emails takes it (attachments and `scheduled_at` included), each checked by the same rules.',
      '',
      '- `x-batch-validation: strict` (the default) refuses the whole batch when any item is refused: 422 with `details.index` naming the item.',
      '- `permissive` sends the valid items and lists the others in `errors` by index.',
      '',
      '`data` holds the ids of the emails sent, in the order of their items. An `Idempotency-Key` covers the whole batch.',
    ].join('\n'),
    permission: 'sending_access',
    scope: 'emails:send',
    idempotent: 'answered-in-commit',
    bodyLimit: SEND_BODY_LIMIT,
    // Items are read one by one by the handler (a permissive batch sends the valid ones), as sendBody documents: an
    // item that is not even an object is refused as the item it is, not as the batch.
    body: z.array(z.unknown()).min(1).max(100),
    bodyDoc: z.array(sendBody).min(1).max(100).describe('1-100 emails, each as POST /emails takes it'),
    examples: batchExamples,
    headers: z.object({
      'x-batch-validation': z
        .enum(['strict', 'permissive'])
        .default('strict')
        .describe('`strict`: any refused item refuses the batch; `permissive`: the valid items are sent'),
    }),
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
      const read = (item: unknown) => {
        if (item === null || typeof item !== 'object' || Array.isArray(item))
          throw new ServiceError(
            'validation_error',
            'The item is not an object: give an email as POST /emails takes it.',
          );
        return { input: parseBody(sendBody, item) as SendInput };
      };
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
    summary: 'List sent emails',
    description:
      'List the emails the team sent, newest first, with their last event; the bodies are left out (GET one for them). `search` keeps the emails whose subject, sender (address or name) or any recipient (to, cc, bcc) contains it, as GET /emails/receiving searches received mail; the cursors page through the matches.',
    scope: 'emails:read',
    query: listQuery.safeExtend({ search: mailSearch }),
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
    summary: 'Retrieve a sent email',
    description:
      'Retrieve a sent email: its addresses, subject, bodies, tags and `last_event` (sent, delivered, bounced, ...).',
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
    summary: 'Reschedule an email',
    description: 'Reschedule a scheduled email that has not been released yet.',
    scope: 'emails:write',
    params: emailParams,
    body: z.object({
      scheduled_at: z
        .string()
        .describe('The new time: ISO 8601, or a phrase such as `in 2 hours`, `tomorrow at 9am` (UTC)'),
    }),
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
    summary: 'Cancel a scheduled email',
    description: 'Cancel a scheduled email that has not been released yet.',
    scope: 'emails:write',
    params: emailParams,
    response: ref('email'),
    handler: async ({ auth, params, deps }) => {
      const row = await cancel(deps.db, auth.team.id, params.email_id);
      return { object: 'email' as const, id: row.id };
    },
  }),
];
