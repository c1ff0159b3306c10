// "What happened to this email": one readable document of an email's status, its events in order, each
// recipient's state and the delivery attempts (with their last SMTP reply), for a person or an AI assistant (the MCP
// server's resource, api/mcp/resources.ts). Every query is scoped by the team; the events are found through the
// index on their email id (migration 20261129040100).
import type { Knex } from 'knex';
import { getEmail } from './store.ts';
import type { AttemptRow } from './attempts.ts';
import type { EmailRow } from './present.ts';
import { ServiceError } from '../errors.ts';
import { eventTypes, type EventType } from '../events.ts';
import type { ListQuery } from '../pagination.ts';

/** At most this many events and attempts are told; more are counted. */
const MAX_ROWS = 200;

export interface EmailStory {
  email: EmailRow;
  recipients: {
    address: string;
    kind: string;
    status: string;
    attempts: number;
    last_response: string | null;
    next_attempt_at: Date | null;
    delivered_at: Date | null;
  }[];
  events: EmailEventRow[];
  attempts: AttemptRow[];
  more: { events: boolean; attempts: boolean };
}

/** A sent email's event types: every `email.*` type but a received message's. */
export type SentEmailEventType = Exclude<Extract<EventType, `email.${string}`>, 'email.received'>;

/** The events of a sent email (GET /emails/{email_id}/events reads them too), in the order events.ts lists them. */
export const sentEmailEventTypes = eventTypes.filter(
  (t): t is SentEmailEventType => t.startsWith('email.') && t !== 'email.received',
);

export interface EmailEventRow {
  id: string;
  type: SentEmailEventType;
  created_at: Date;
  /** The webhook payload's `data`: the email's fields, `to` the recipients the event names, and its details. */
  data: Record<string, unknown>;
}

/** The team's events of one sent email. */
const eventsOf = (db: Knex, teamId: string, emailId: string) =>
  db('events')
    .where({ team_id: teamId })
    // `\\?`: knex's escape of the jsonb operator; the index's predicate, so the index serves the read.
    .whereRaw(`data \\? 'email_id' and data->>'email_id' = ?`, [emailId])
    .whereIn('type', sentEmailEventTypes);

/**
 * A page of an email's events, oldest first (time, then id: the events of one transaction share its time). The
 * cursors are event ids: `after` the events that followed that one, `before` those that preceded it; a cursor that
 * is not an event of this email is a validation_error naming it. The email is not looked up here.
 */
export async function pageEmailEvents(
  db: Knex,
  teamId: string,
  emailId: string,
  page: Pick<ListQuery, 'limit' | 'after' | 'before'>,
): Promise<{ has_more: boolean; rows: EmailEventRow[] }> {
  const q = eventsOf(db, teamId, emailId)
    .select('id', 'type', 'created_at', 'data')
    .limit(page.limit + 1);
  const cursor = page.after ?? page.before;
  if (cursor) {
    const known = await eventsOf(db, teamId, emailId).where({ id: cursor }).first('id');
    if (!known) {
      const path = page.after ? 'after' : 'before';
      throw new ServiceError('validation_error', `Invalid query parameter \`${path}\`: not an event of this email.`, {
        errors: [{ path, message: 'not an event of this email' }],
      });
    }
    // The cursor's own row in the comparison: its time keeps the microseconds a JS Date would lose.
    const at = db('events').where({ id: cursor }).select('created_at', 'id');
    q.whereRaw(`(created_at, id) ${page.after ? '>' : '<'} ?`, [at]);
  }
  if (page.before) {
    const rows: EmailEventRow[] = await q.orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ]);
    return { has_more: rows.length > page.limit, rows: rows.slice(0, page.limit).reverse() };
  }
  const rows: EmailEventRow[] = await q.orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return { has_more: rows.length > page.limit, rows: rows.slice(0, page.limit) };
}

export async function loadStory(db: Knex, teamId: string, emailId: string): Promise<EmailStory> {
  const email = await getEmail(db, teamId, emailId);
  const [recipients, events, attempts] = await Promise.all([
    db('email_recipients')
      .where({ team_id: teamId, email_id: emailId })
      .orderBy([{ column: 'kind', order: 'desc' }, 'address'])
      .select('address', 'kind', 'status', 'attempts', 'last_response', 'next_attempt_at', 'delivered_at'),
    pageEmailEvents(db, teamId, emailId, { limit: MAX_ROWS }),
    db<AttemptRow>('delivery_attempts')
      .where({ team_id: teamId, email_id: emailId })
      .orderBy('started_at')
      .limit(MAX_ROWS + 1),
  ]);
  return {
    email,
    recipients,
    events: events.rows,
    attempts: attempts.slice(0, MAX_ROWS),
    more: { events: events.has_more, attempts: attempts.length > MAX_ROWS },
  };
}

const at = (d: Date | null) => (d ? d.toISOString() : '-');
/** A value on a line of its own: one line. */
const text = (v: unknown) =>
  String(v ?? '-')
    .replace(/\s+/g, ' ')
    .slice(0, 300);
/** A value in a table cell: one line, no pipe to break the table. */
const cell = (v: unknown) =>
  String(v ?? '-')
    .replace(/\s+/g, ' ')
    .replace(/\|/g, '\\|')
    .slice(0, 300);

/** What an event adds to its line: the recipient and why, when it says. */
function eventDetail(type: string, data: Record<string, unknown>): string {
  const parts: string[] = [];
  const bounce = data.bounce as { type?: string; subType?: string; message?: string } | undefined;
  if (bounce) parts.push(`${bounce.type ?? ''} ${bounce.subType ?? ''}: ${bounce.message ?? ''}`.trim());
  const suppressed = data.suppressed as { reason?: string; message?: string } | undefined;
  if (suppressed) parts.push(suppressed.message ?? suppressed.reason ?? '');
  const click = data.click as { link?: string } | undefined;
  if (click?.link) parts.push(`link ${click.link}`);
  if (type === 'email.failed' && data.failed) parts.push(String((data.failed as { reason?: string }).reason ?? ''));
  return parts.filter(Boolean).join('; ');
}

/** The story as Markdown: headings, one table per list. */
export function renderStory(s: EmailStory): string {
  const e = s.email;
  const lines = [
    `# Email ${e.id}`,
    '',
    `- Subject: ${text(e.subject)}`,
    `- From: ${text(e.from)}`,
    `- To: ${text(e.to.join(', '))}${e.cc.length ? `; cc ${text(e.cc.join(', '))}` : ''}`,
    `- Created: ${at(e.created_at)}${e.scheduled_at ? `; scheduled for ${at(e.scheduled_at)}` : ''}`,
    `- Status: ${e.status}; last event: ${e.last_event}`,
    ...(e.topic_id ? [`- Topic: ${e.topic_id}`] : []),
    ...(e.template_id ? [`- Template: ${e.template_id}`] : []),
    '',
    '## Recipients',
    '',
    '| address | kind | state | attempts | last reply | next attempt | delivered |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...s.recipients.map(
      (r) =>
        `| ${cell(r.address)} | ${r.kind} | ${r.status} | ${r.attempts} | ${cell(r.last_response)} | ` +
        `${at(r.next_attempt_at)} | ${at(r.delivered_at)} |`,
    ),
    '',
    '## Events',
    '',
    ...(s.events.length
      ? [
          '| time | event | recipients | detail |',
          '| --- | --- | --- | --- |',
          ...s.events.map(
            (v) =>
              `| ${at(v.created_at)} | ${v.type} | ${cell(((v.data.to as string[] | undefined) ?? []).join(', '))} | ` +
              `${cell(eventDetail(v.type, v.data) || '-')} |`,
          ),
        ]
      : ['No events yet.']),
    ...(s.more.events ? ['', `(the first ${MAX_ROWS} events)`] : []),
    '',
    '## Delivery attempts',
    '',
    ...(s.attempts.length
      ? [
          '| started | domain | MX | TLS | outcome | reply | ms |',
          '| --- | --- | --- | --- | --- | --- | --- |',
          ...s.attempts.map(
            (a) =>
              `| ${at(a.started_at)} | ${cell(a.domain)} | ${cell(a.mx_host)} | ${a.tls ? 'yes' : 'no'} | ` +
              `${a.outcome} | ${cell(a.response)} | ${a.duration_ms} |`,
          ),
        ]
      : ['No delivery attempts yet (simulator recipients are answered without one).']),
    ...(s.more.attempts ? ['', `(the first ${MAX_ROWS} attempts)`] : []),
  ];
  return lines.join('\n') + '\n';
}
