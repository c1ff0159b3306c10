// The accept statement (persist.ts runs it): one email as ONE SQL statement of CTEs, composed from a prepared send
// without touching the database. Its row, recipients, attachments, submitted message (email_raw) and first events,
// the bulk rule's counter and the Idempotency-Key answer each have their part. Every other part reads the email's
// (and the email's reads the counter's), so the statement writes all of it or nothing.
import type { Config } from '../config.ts';
import { newId } from '../ids.ts';
import { eventRow, type EventRow } from '../events.ts';
import { formatMailbox } from './addresses.ts';
import { contentHash } from './rules.ts';
import { emailEventData, type EmailRow } from './present.ts';
import type { Caller, PreparedEmail, PreparedRecipient } from './prepare.ts';
import { answerUpdate, type Reservation } from '../idempotency/store.ts';
import { contactUnsubscribedSuppressed, topicSuppressed } from '../topics/subscriptions.ts';
import { emailState } from './last-event.ts';
import { EMAIL_COLUMNS } from './columns.ts';

/** The Idempotency-Key answer to store with the email(s), by their own statement or in their transaction. */
export interface InCommitAnswer {
  reservation: Reservation;
  status: number;
  body(ids: string[]): unknown;
}

// Every parameter typed: in INSERT ... SELECT an untyped parameter would be read as text.
const CASTS: Record<(typeof EMAIL_COLUMNS)[number], string> = {
  id: 'uuid',
  team_id: 'uuid',
  domain_id: 'uuid',
  api_key_id: 'uuid',
  source: 'text',
  from: 'text',
  from_address: 'text',
  to: 'text[]',
  cc: 'text[]',
  bcc: 'text[]',
  reply_to: 'text[]',
  subject: 'text',
  html: 'text',
  text: 'text',
  headers: 'jsonb',
  tags: 'jsonb',
  topic_id: 'uuid',
  template_id: 'uuid',
  message_id: 'text',
  raw_blob_key: 'text',
  status: 'text',
  last_event: 'text',
  scheduled_at: 'timestamptz',
  size_bytes: 'int',
  request_id: 'text',
  created_at: 'timestamptz',
  updated_at: 'timestamptz',
};
const EMAIL_INSERT = `insert into emails (${EMAIL_COLUMNS.map((c) => `"${c}"`).join(', ')}) select ${EMAIL_COLUMNS.map((c) => `?::${CASTS[c]}`).join(', ')}`;

/**
 * email.suppressed's `suppressed` for a recipient not sent to: on the team's list (Resend's
 * OnAccountSuppressionList, with the entry's origin as the reason), not subscribed to the send's topic, or a contact
 * unsubscribed from everything (a send under a topic).
 */
function suppressedData(r: PreparedRecipient, topic: PreparedEmail['topic']) {
  const origin = r.suppression?.origin;
  if (origin === 'topic' && topic) return topicSuppressed(r.address, topic);
  if (origin === 'contact_unsubscribed' && topic) return contactUnsubscribedSuppressed(r.address, topic);
  const reason =
    origin === 'complaint'
      ? 'previous_complaint'
      : origin === 'unsubscribe'
        ? 'previous_unsubscribe'
        : origin === 'manual'
          ? 'manual'
          : 'previous_bounce';
  return { type: 'OnAccountSuppressionList', reason, message: `${r.address} is on the team's suppression list.` };
}

export interface Statement {
  /** The prepared statement's name: one per shape of the SQL text. */
  name: string;
  sql: string;
  bindings: unknown[];
  row: EmailRow;
  bulk: boolean;
}

/**
 * The email's row as the statement writes it. Its state is the one rule's (last-event.ts) from the recipients as
 * accepted; a scheduled email shows `scheduled` until its release.
 */
function emailRow(
  caller: Caller,
  p: PreparedEmail,
  id: string,
  rawKey: string | null,
  now: Date,
  scheduled: boolean,
): EmailRow {
  const initial = scheduled ? 'scheduled' : 'queued';
  const state = emailState(
    { last_event: initial, status: initial },
    p.recipients.map((r) => ({ status: r.status, delay_notified: false })),
  );
  return {
    id,
    team_id: caller.team.id,
    domain_id: p.domain.id,
    api_key_id: caller.key?.id ?? null,
    source: caller.source,
    from: formatMailbox(p.from),
    from_address: p.from.address,
    to: p.to,
    cc: p.cc,
    bcc: p.bcc,
    reply_to: p.reply_to,
    subject: p.subject,
    html: p.html,
    text: p.text,
    headers: p.headers,
    tags: p.tags,
    topic_id: p.topic?.id ?? null,
    template_id: p.templateId ?? null,
    message_id: p.raw?.messageId ?? `<${id}@${p.domain.name}>`,
    raw_blob_key: rawKey,
    status: state.status,
    last_event: state.status === 'scheduled' ? 'scheduled' : state.last_event,
    scheduled_at: p.scheduled_at,
    size_bytes: p.size,
    request_id: caller.requestId ?? null,
    created_at: now,
    updated_at: now,
  };
}

/**
 * The email's first events, from the values written (emailEventData reads only these). email.sent as Resend has
 * it: the request succeeded and delivery will be attempted (a scheduled send's comes at its release,
 * shared/emails/store.ts releaseDue); none when every recipient is suppressed. Then email.suppressed for each
 * suppressed recipient.
 */
function firstEvents(row: EmailRow, p: PreparedEmail, scheduled: boolean, queued: number): EventRow[] {
  const teamId = row.team_id;
  const events: EventRow[] = [];
  if (scheduled) events.push(eventRow(teamId, 'email.scheduled', emailEventData(row)));
  else if (queued > 0) events.push(eventRow(teamId, 'email.sent', emailEventData(row)));
  for (const r of p.recipients.filter((x) => x.status === 'suppressed')) {
    events.push(
      eventRow(
        teamId,
        'email.suppressed',
        emailEventData(row, { to: [r.address], suppressed: suppressedData(r, p.topic) }),
      ),
    );
  }
  return events;
}

/** The recipient rows: one to send to is due now, or at the schedule. */
function recipientRows(p: PreparedEmail, row: EmailRow, now: Date, scheduled: boolean) {
  return p.recipients.map((r) => ({
    id: newId(),
    email_id: row.id,
    team_id: row.team_id,
    address: r.address,
    domain: r.domain,
    kind: r.kind,
    status: r.status,
    last_response: r.reason,
    next_attempt_at: r.status === 'queued' ? (scheduled ? p.scheduled_at : now) : null,
    updated_at: now,
  }));
}

// The statement's parts, each a CTE writing one table; every insert reads `email`, so none writes without it.
// The day's counter for this content, raised only while it stays within the limit (a first send above the
// limit inserts nothing either). ON CONFLICT ... WHERE locks the row even when it does not update it.
const BULK_CTE = `bulk as (insert into bulk_counters (team_id, day, content_hash, recipients) select ?::uuid, ?::date, ?::text, ?::int where ?::int <= ?::int
      on conflict (team_id, day, content_hash) do update set recipients = bulk_counters.recipients + excluded.recipients
      where bulk_counters.recipients + excluded.recipients <= ?::int returning recipients)`;
const RECIPIENTS_CTE = `recipient_rows as (insert into email_recipients (id, email_id, team_id, address, domain, kind, status, last_response, next_attempt_at, updated_at)
    select r.id, r.email_id, r.team_id, r.address, r.domain, r.kind, r.status, r.last_response, r.next_attempt_at, r.updated_at
    from email, json_populate_recordset(null::email_recipients, ?::json) r)`;
const ATTACHMENTS_CTE = `attachment_rows as (insert into email_attachments (id, email_id, team_id, position, filename, content_type, content_id, content_disposition, size, blob_key)
      select a.id, a.email_id, a.team_id, a.position, a.filename, a.content_type, a.content_id, a.content_disposition, a.size, a.blob_key
      from email, json_populate_recordset(null::email_attachments, ?::json) a)`;
const RAW_CTE =
  'raw_row as (insert into email_raw (email_id, team_id, bytes) select email.id, ?::uuid, ?::bytea from email)';
const EVENTS_CTE = `first_events as (insert into events (id, team_id, type, data) select e.id, e.team_id, e.type, e.data
      from email, json_populate_recordset(null::events, ?::json) e)`;

/** The events as one JSON array; each event's data is JSON text already and goes in as it is. */
const eventsJson = (events: EventRow[]) =>
  `[${events.map((e) => `{"id":${JSON.stringify(e.id)},"team_id":${JSON.stringify(e.team_id)},"type":${JSON.stringify(e.type)},"data":${e.data}}`).join(',')}]`;

/**
 * One email as one statement: its row, recipients, attachments and first events, the bulk rule's counter and,
 * last in a send, the Idempotency-Key answer. The bulk rule is decided inside: the counter is raised only while
 * the day's count stays within the limit, and every insert depends on that raise, so a refused send writes
 * nothing (the statement answers no row and the caller refuses it).
 */
export function emailStatement(
  config: Pick<Config, 'BULK_DAILY_LIMIT'>,
  caller: Caller,
  p: PreparedEmail,
  id: string,
  attachments: object[],
  rawKey: string | null,
  now: Date,
  answer?: InCommitAnswer,
): Statement {
  // The submitted message in the row's own table unless it went to the blob store.
  const inlineRaw = p.raw && rawKey === null ? p.raw.bytes : null;
  const teamId = caller.team.id;
  const queued = p.recipients.filter((r) => r.status === 'queued').length;
  const scheduled = p.scheduled_at !== null && p.scheduled_at.getTime() > now.getTime();
  const row = emailRow(caller, p, id, rawKey, now, scheduled);
  const events = firstEvents(row, p, scheduled, queued);

  const ctes: string[] = [];
  const bindings: unknown[] = [];
  const add = (cte: string, ...values: unknown[]) => {
    ctes.push(cte);
    bindings.push(...values);
  };
  const bulk = !p.unsubscribe && queued > 0;
  if (bulk) {
    const limit = config.BULK_DAILY_LIMIT;
    const hash = contentHash(p.from.address, p.subject, p.html, p.text);
    add(BULK_CTE, teamId, now.toISOString().slice(0, 10), hash, queued, queued, limit, limit);
  }
  add(
    `email as (${EMAIL_INSERT}${bulk ? ' where exists (select 1 from bulk)' : ''} returning id)`,
    ...EMAIL_COLUMNS.map((c) => (c === 'headers' || c === 'tags' ? JSON.stringify(row[c]) : row[c])),
  );
  add(RECIPIENTS_CTE, JSON.stringify(recipientRows(p, row, now, scheduled)));
  if (attachments.length) add(ATTACHMENTS_CTE, JSON.stringify(attachments));
  if (inlineRaw) add(RAW_CTE, teamId, inlineRaw);
  if (events.length) add(EVENTS_CTE, eventsJson(events));
  if (answer) {
    const update = answerUpdate(answer.reservation, answer.status, answer.body([id]));
    add(`answer as (${update.sql} and exists (select 1 from email))`, ...update.bindings);
  }
  const name = `pw_email_${[bulk, attachments.length > 0, events.length > 0, !!answer, !!inlineRaw].map(Number).join('')}`;
  return { name, sql: `with ${ctes.join(',\n')}\nselect count(*)::int as written from email`, bindings, row, bulk };
}
