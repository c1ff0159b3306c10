// A sent email's events (the dashboard's timeline): what the webhooks are sent, read back for one email, oldest
// first. The rows are the ones the MCP resource's story tells (shared/emails/story.ts pageEmailEvents).
import { z } from 'zod';
import { getEmail } from '../../shared/emails/store.ts';
import { pageEmailEvents, sentEmailEventTypes, type EmailEventRow } from '../../shared/emails/story.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { isoRequired } from '../../shared/time.ts';
import { defineOperation } from './operation.ts';
import { pathId, timestamp } from './schemas.ts';

const bounce = z
  .object({
    type: z.string().describe('`Permanent`, `Transient` or `Undetermined`'),
    subType: z.string().describe("`General`, `NoEmail`, `MailboxFull`, ... (the webhook payload's values)"),
    message: z.string(),
    diagnosticCode: z.array(z.string()).optional().describe("The SMTP reply or the report's Diagnostic-Code"),
  })
  .describe('Why it bounced (email.bounced)');
const click = z
  .object({
    ipAddress: z.string(),
    link: z.string(),
    timestamp: z.string(),
    userAgent: z.string().nullable(),
  })
  .describe('The link clicked, when and by what (email.clicked)');
const suppressed = z
  .object({
    type: z.string().describe('`OnAccountSuppressionList` or `Suppressed`'),
    reason: z.string().describe('`previous_bounce`, `previous_complaint`, `unsubscribed_from_topic`, ...'),
    message: z.string(),
    topic_id: z.string().optional(),
  })
  .describe('Why the recipient was not sent to (email.suppressed)');
const failed = z.object({ reason: z.string() }).describe('Why the email failed (email.failed)');

const emailEvent = z
  .object({
    object: z.literal('email_event'),
    id: z.uuid(),
    email_id: z.uuid(),
    type: z.enum(sentEmailEventTypes),
    created_at: timestamp,
    to: z
      .array(z.string())
      .describe(
        "The recipients the event names: the one opened, clicked, bounced, ...; for email.sent, email.scheduled and email.canceled the email's `to`",
      ),
    bounce: bounce.nullable(),
    click: click.nullable(),
    suppressed: suppressed.nullable(),
    failed: failed.nullable(),
  })
  .meta({ id: 'EmailEvent' });

function presentEvent(emailId: string) {
  return (e: EmailEventRow) => {
    const d = e.data;
    const detail = <T>(key: string) => (d[key] ?? null) as T | null;
    return {
      object: 'email_event' as const,
      id: e.id,
      email_id: emailId,
      type: e.type,
      created_at: isoRequired(e.created_at),
      to: Array.isArray(d.to) ? (d.to as string[]) : [],
      bounce: detail<z.infer<typeof bounce>>('bounce'),
      click: detail<z.infer<typeof click>>('click'),
      suppressed: detail<z.infer<typeof suppressed>>('suppressed'),
      failed: detail<z.infer<typeof failed>>('failed'),
    };
  };
}

export const emailEventOperations = [
  defineOperation({
    tag: 'emails',
    permission: 'full_access',
    scope: 'emails:read',
    method: 'get',
    operationId: 'listEmailEvents',
    path: '/emails/{email_id}/events',
    summary: "List an email's events",
    description: [
      "List a sent email's events, oldest first: the ones its webhooks are sent (email.scheduled, email.sent, email.delivery_delayed, email.delivered, email.bounced, email.complained, email.opened, email.clicked, email.failed, email.suppressed, email.canceled), each with the recipients it names in `to` and its details as recorded (`bounce`, `click`, `suppressed`, `failed`; null when the type has none: an open or a complaint is the recipient and the time).",
      '',
      "A recipient's state is its latest event: a bounce reported after the delivery (a DSN) makes it bounced. Cursors are event ids: `after` an id gives the events that followed it, `before` those that preceded it.",
    ].join('\n'),
    params: z.object({ email_id: pathId('sent email') }),
    query: listQuery,
    response: listEnvelope(emailEvent),
    handler: async ({ auth, params, query, deps }) => {
      await getEmail(deps.db, auth.team.id, params.email_id);
      const page = await pageEmailEvents(deps.db, auth.team.id, params.email_id, query);
      return toList(page, presentEvent(params.email_id));
    },
  }),
];
