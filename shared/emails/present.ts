// The API and webhook shapes of a sent email (resend-api.md §1.1 and §4).
import { isoRequired, iso } from '../time.ts';

export const lastEvents = [
  'queued',
  'scheduled',
  'sent',
  'delivered',
  'delivery_delayed',
  'bounced',
  'complained',
  'opened',
  'clicked',
  'failed',
  'canceled',
  'suppressed',
] as const;
export type LastEvent = (typeof lastEvents)[number];

export interface EmailRow {
  id: string;
  team_id: string;
  domain_id: string | null;
  api_key_id: string | null;
  source: 'api' | 'smtp' | 'broadcast';
  from: string;
  from_address: string;
  to: string[];
  cc: string[];
  bcc: string[];
  reply_to: string[];
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  tags: { name: string; value: string }[];
  topic_id: string | null;
  /** The template it was sent from; null before migration 20261129040000 and for sends without one. */
  template_id: string | null;
  message_id: string;
  status: 'scheduled' | 'queued' | 'sending' | 'done' | 'canceled';
  last_event: LastEvent;
  scheduled_at: Date | null;
  raw_blob_key: string | null;
  size_bytes: number;
  /** The request that sent it, as its process logged it (Caller.requestId); null before migration 20261126050000. */
  request_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const orNull = (list: string[]) => (list.length ? list : null);

export function presentEmail(e: EmailRow) {
  return {
    object: 'email' as const,
    id: e.id,
    message_id: e.message_id,
    from: e.from,
    to: e.to,
    cc: orNull(e.cc),
    bcc: orNull(e.bcc),
    reply_to: orNull(e.reply_to),
    subject: e.subject,
    html: e.html,
    text: e.text,
    created_at: isoRequired(e.created_at),
    scheduled_at: iso(e.scheduled_at),
    last_event: e.last_event,
    tags: e.tags,
    topic_id: e.topic_id,
    template_id: e.template_id ?? null,
  };
}

export function presentListItem(e: EmailRow) {
  const { html: _h, text: _t, tags: _g, ...rest } = presentEmail(e);
  return rest;
}

/** The columns the email.* events' data is made of. */
export const EMAIL_EVENT_COLUMNS = [
  'id',
  'team_id',
  'created_at',
  'from',
  'to',
  'subject',
  'message_id',
  'tags',
] as const;

/** `data` of the email.* events: tags as an object, as the webhook payloads have them. */
export function emailEventData(
  e: Pick<EmailRow, (typeof EMAIL_EVENT_COLUMNS)[number]>,
  extra: Record<string, unknown> = {},
) {
  return {
    email_id: e.id,
    created_at: isoRequired(e.created_at),
    from: e.from,
    to: e.to,
    subject: e.subject,
    message_id: e.message_id,
    ...(e.tags.length ? { tags: Object.fromEntries(e.tags.map((t) => [t.name, t.value])) } : {}),
    ...extra,
  };
}
