// Schemas of the broadcasts routes (resend-api.md §1.8) and the shapes of their answers.
import { z } from 'zod';
import { iso, isoRequired } from '../../shared/time.ts';
import { statuses, type BroadcastRow } from '../../shared/broadcasts/store.ts';
import { bounceTypes, recipientTypes, type BroadcastCounts } from '../../shared/broadcasts/reports.ts';
import { listQuery } from '../../shared/pagination.ts';
import { idParams, timestamp } from './schemas.ts';
import { blockDocumentSchema } from '../../shared/templates/blocks.ts';

export const broadcastParams = idParams('broadcast');

const replyTo = z.union([z.string(), z.array(z.string())]).nullable();

/** The content fields a create and an update share; the SDK sends every key, undefined ones dropped by JSON. */
export const contentFields = {
  name: z.string().nullable().optional().describe('A name for the team to know it by.'),
  segment_id: z.uuid().optional().describe('The segment to send to.'),
  audience_id: z.uuid().optional().describe('Legacy name of `segment_id` (an audience is a segment).'),
  topic_id: z
    .uuid()
    .nullable()
    .optional()
    .describe(
      "Send only to the segment's contacts subscribed to this topic (their choice, else the topic's default); each copy's one-click unsubscribe opts out of it.",
    ),
  from: z.string().optional().describe('Sender, `Name <address>` at a verified domain of the team.'),
  reply_to: replyTo.optional().describe('One address or a list.'),
  subject: z.string().optional().describe('May carry merge tags, as html.'),
  preview_text: z.string().nullable().optional().describe('Shown by inboxes after the subject (a hidden preheader).'),
  html: z
    .string()
    .nullable()
    .optional()
    .describe(
      'May carry merge tags: `{{{FIRST_NAME|there}}}`, `{{{LAST_NAME}}}`, `{{{EMAIL}}}`, a contact property `{{{KEY|fallback}}}`, `{{{RESEND_UNSUBSCRIBE_URL}}}` (docs/broadcasts.md).',
    ),
  text: z
    .string()
    .nullable()
    .optional()
    .describe(
      'The plain-text part; merge tags as html (values not escaped). With a `document`, when not given: written from its blocks.',
    ),
  document: blockDocumentSchema
    .nullable()
    .optional()
    .describe(
      "The body as a block document (the templates' model, instead of `html`): its html and text are rendered from it when written; merge tags in block text work as in html. Giving `html` drops it; both at once is 422. Null drops it and keeps the html it made.",
    ),
};

const has = (b: unknown, key: string) =>
  b !== null && typeof b === 'object' && (b as Record<string, unknown>)[key] !== undefined;

const acknowledge = z
  .boolean()
  .optional()
  .describe('Send even though a pre-send check fails (`details.checks` of the refusal lists them).');

export const createBody = z
  .object({
    ...contentFields,
    template_id: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "Make the broadcast from this published template (id or alias): its published version's subject, html, text and document are copied in when the broadcast is created (a snapshot: later edits of the template do not change it); `from`, `subject` and `reply_to` given here win. Not with `html`, `text` or `document`.",
      ),
    variables: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        "With `template_id`: values of the template's own declared variables, filled in the snapshot (their fallbacks when not given). Contact merge tags are filled per recipient at send.",
      ),
    send: z.boolean().optional().describe('Send at once (or at `scheduled_at`) instead of keeping a draft.'),
    scheduled_at: z
      .string()
      .optional()
      .describe('With `send`: an ISO 8601 instant or a phrase (`in 2 hours`, `tomorrow at 9am`), within 30 days.'),
    acknowledge_checks: acknowledge,
  })
  // from and subject may come from a template; without one they are required, and say so as a missing field would
  // (422 missing_required_field, api/middleware/validate.ts). `when`: checked even beside other issues.
  .refine((b) => has(b, 'template_id') || has(b, 'from'), {
    path: ['from'],
    message: 'Required unless `template_id` is given',
    when: () => true,
  })
  .refine((b) => has(b, 'template_id') || has(b, 'subject'), {
    path: ['subject'],
    message: 'Required unless `template_id` is given',
    when: () => true,
  });

export const sendBody = z.object({
  scheduled_at: z
    .string()
    .nullable()
    .optional()
    .describe('An ISO 8601 instant or a phrase (`in 2 hours`, `tomorrow at 9am`), within 30 days; none: now.'),
  acknowledge_checks: acknowledge,
});

export const updateBody = z.object(contentFields);

const status = z.enum(statuses);

export const listItem = z
  .object({
    id: z.uuid(),
    name: z.string().nullable(),
    audience_id: z.uuid().nullable(),
    segment_id: z.uuid().nullable(),
    topic_id: z.uuid().nullable(),
    status,
    created_at: timestamp,
    scheduled_at: timestamp.nullable(),
    sent_at: timestamp.nullable(),
  })
  .meta({ id: 'BroadcastListItem' });

const counts = z
  .object({
    recipients: z.number().int().describe('Copies handed to delivery so far'),
    suppressed: z.number().int().describe("Members left out: on the team's suppression list"),
    delivered: z.number().int(),
    bounced: z.number().int(),
    complained: z.number().int(),
    opened: z.number().int().describe('Recipients who opened (humans only)'),
    clicked: z.number().int().describe('Recipients who clicked (humans only)'),
  })
  .meta({ id: 'BroadcastCounts' });

export const broadcast = z
  .object({
    object: z.literal('broadcast'),
    ...listItem.shape,
    from: z.string(),
    subject: z.string(),
    reply_to: z.array(z.string()).nullable(),
    preview_text: z.string().nullable(),
    html: z.string().nullable().describe('As given, or rendered from `document`'),
    text: z.string().nullable(),
    document: blockDocumentSchema.nullable().describe('The block document the html was rendered from; null: html'),
    template_id: z.uuid().nullable().describe('Extension: the template the content was copied from at create'),
    started_at: timestamp.nullable().describe('Extension: when its fan-out began'),
    canceled_at: timestamp.nullable().describe('Extension'),
    failure_reason: z.string().nullable().describe('Extension: why a `failed` broadcast stopped'),
    counts: counts.describe('Extension: what its copies have come to'),
  })
  .meta({ id: 'Broadcast' });

export function presentListItem(b: BroadcastRow): z.input<typeof listItem> {
  return {
    id: b.id,
    name: b.name,
    audience_id: b.segment_id,
    segment_id: b.segment_id,
    topic_id: b.topic_id,
    status: b.status,
    created_at: isoRequired(b.created_at),
    scheduled_at: iso(b.scheduled_at),
    sent_at: iso(b.sent_at),
  };
}

export function presentBroadcast(b: BroadcastRow, c: BroadcastCounts): z.input<typeof broadcast> {
  return {
    object: 'broadcast',
    ...presentListItem(b),
    from: b.from,
    subject: b.subject,
    reply_to: b.reply_to.length ? b.reply_to : null,
    preview_text: b.preview_text,
    html: b.html,
    text: b.text,
    document: b.document,
    template_id: b.template_id,
    started_at: iso(b.started_at),
    canceled_at: iso(b.canceled_at),
    failure_reason: b.failure_reason,
    counts: c,
  };
}

export const recipientsQuery = z
  .object({
    ...listQuery.shape,
    type: z.enum(recipientTypes).default('sent').describe('What happened to the copies listed (default `sent`)'),
    email: z.string().optional().describe('Only this address'),
    bounce_type: z.enum(bounceTypes).optional().describe('With `type=bounced`: only bounces of this type'),
  })
  .refine((q) => !(q.after && q.before), { message: '`after` and `before` cannot be used together.', path: ['after'] })
  .refine((q) => !q.bounce_type || q.type === 'bounced', {
    message: '`bounce_type` goes only with `type=bounced`.',
    path: ['bounce_type'],
  });

export const recipientItem = z
  .object({
    id: z.uuid().describe('A cursor for this row'),
    contact_id: z.uuid().nullable(),
    email: z.string(),
    count: z.number().int().optional().describe('With opened and clicked: how many times (humans only)'),
    bounce_type: z.enum(bounceTypes).optional(),
    clicked_links: z.array(z.object({ url: z.string(), clicks: z.number().int() })).optional(),
  })
  .meta({ id: 'BroadcastRecipient' });

export const clickedLinkItem = z
  .object({
    id: z.uuid().describe('An opaque cursor for this row'),
    url: z.string(),
    clicks: z.number().int(),
    unique_clicks: z.number().int(),
  })
  .meta({ id: 'BroadcastClickedLink' });
