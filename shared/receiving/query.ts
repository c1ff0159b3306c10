// Reading received mail for the API: the list with its search and date window, one email, its attachments,
// and the rows a signed download opens. Only a message the receive job has turned into a received email is
// visible (a `received_emails` row); a message still `stored`, and a bounce, are not received mail.
import type { Knex } from 'knex';
import { notFound, ServiceError } from '../errors.ts';
import { paginate, paginateByPosition, type ListQuery } from '../pagination.ts';
import type { AttachmentRow } from '../attachment-rows.ts';
import { containsPattern } from '../db/contains.ts';

/** Why a message was recorded without its content (spec, `dropped_reason`). */
export const droppedReasons = [
  'storage_quota',
  'daily_cap',
  'virus',
  'parse_failed',
  'no_mailbox',
  'team_blocked',
] as const;
export type DroppedReason = (typeof droppedReasons)[number];

export interface ReceivedEmailRow {
  id: string;
  team_id: string;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  reply_to: string[];
  subject: string;
  message_id: string;
  html: string | null;
  text: string | null;
  /** html and text exactly, when their columns could not hold them (exact-text.ts). */
  html_exact: Buffer | null;
  text_exact: Buffer | null;
  headers: [string, string][];
  dropped_reason: DroppedReason | null;
  created_at: Date;
}

/** A received email with what its message row adds: who it was accepted for and where its raw source is. */
export interface ReceivedEmailDetail extends ReceivedEmailRow {
  rcpt_to: string[];
  /** Null: the bytes are in received_raw (shared/receiving/raw.ts). */
  raw_blob_key: string | null;
}

export type ReceivedAttachmentRow = AttachmentRow;

export interface ReceivedListQuery extends ListQuery {
  search?: string;
  /** `YYYY-MM-DD` (from the start of that UTC day) or an ISO 8601 instant; inclusive. */
  start_date?: string;
  /** `YYYY-MM-DD` (through the end of that UTC day) or an ISO 8601 instant; inclusive. */
  end_date?: string;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** The window `[from, to]` the dates name; a day alone covers all of it (spec: both ends inclusive). */
export function dateWindow(start?: string, end?: string): { from?: Date; toInclusive?: Date; toExclusive?: Date } {
  const from = start ? new Date(DATE_ONLY.test(start) ? `${start}T00:00:00.000Z` : start) : undefined;
  let toInclusive: Date | undefined;
  let toExclusive: Date | undefined;
  if (end && DATE_ONLY.test(end)) toExclusive = new Date(Date.parse(`${end}T00:00:00.000Z`) + 86_400_000);
  else if (end) toInclusive = new Date(end);
  const upper = toExclusive ?? toInclusive;
  if (from && upper && (toExclusive ? from >= toExclusive : from > upper)) {
    throw new ServiceError('validation_error', 'Invalid query parameter `start_date`: must not be after `end_date`.', {
      errors: [{ path: 'start_date', message: 'must not be after `end_date`' }],
    });
  }
  return { from, toInclusive, toExclusive };
}

const received = (db: Knex, teamId: string) =>
  db('received_emails as re').join('received_messages as rm', 'rm.id', 're.id').where('re.team_id', teamId);

/** One page, newest first (ids are UUID v7 from the MX's store, so id order is arrival order). */
export async function listReceived(
  db: Knex,
  teamId: string,
  page: ReceivedListQuery,
): Promise<{ has_more: boolean; rows: ReceivedEmailRow[] }> {
  const q = received(db, teamId).select('re.*');
  const { from, toInclusive, toExclusive } = dateWindow(page.start_date, page.end_date);
  if (from) q.where('re.created_at', '>=', from);
  if (toInclusive) q.where('re.created_at', '<=', toInclusive);
  if (toExclusive) q.where('re.created_at', '<', toExclusive);
  if (page.search !== undefined) {
    // Case-insensitive substring of the subject, the sender (`Name <address>` as written, so name and address),
    // any header recipient or any envelope recipient the message was accepted for. The search text is data, never
    // a pattern: ILIKE with every metacharacter escaped (standard_conforming_strings: '\' is one backslash).
    const pattern = containsPattern(page.search);
    q.where((w) =>
      w
        .whereRaw(`re.subject ilike ? escape '\\'`, [pattern])
        .orWhereRaw(`re."from" ilike ? escape '\\'`, [pattern])
        .orWhereRaw(
          `exists (select 1 from unnest(re."to" || re.cc || re.bcc || rm.rcpt_to) as r(address) where r.address ilike ? escape '\\')`,
          [pattern],
        ),
    );
  }
  return paginate<ReceivedEmailRow>(q, page, 're.id');
}

/** Each email's attachments in part order, for a page of emails. */
export async function attachmentsOf(db: Knex, emailIds: string[]): Promise<Map<string, ReceivedAttachmentRow[]>> {
  const byEmail = new Map<string, ReceivedAttachmentRow[]>(emailIds.map((id) => [id, []]));
  if (!emailIds.length) return byEmail;
  const rows: ReceivedAttachmentRow[] = await db('received_attachments')
    .whereIn('email_id', emailIds)
    .orderBy(['email_id', 'position']);
  for (const r of rows) byEmail.get(r.email_id)?.push(r);
  return byEmail;
}

export async function getReceived(db: Knex, teamId: string, id: string): Promise<ReceivedEmailDetail> {
  const row = await received(db, teamId).where('re.id', id).first('re.*', 'rm.rcpt_to', 'rm.raw_blob_key');
  if (!row) throw notFound('Received email');
  return row;
}

export function pageAttachments(db: Knex, teamId: string, emailId: string, page: ListQuery) {
  return paginateByPosition<ReceivedAttachmentRow>(
    db('received_attachments').where({ email_id: emailId, team_id: teamId }),
    page,
    'an attachment of this email',
  );
}

export async function getAttachment(
  db: Knex,
  teamId: string,
  emailId: string,
  id: string,
): Promise<ReceivedAttachmentRow> {
  const row = await db<ReceivedAttachmentRow>('received_attachments')
    .where({ id, email_id: emailId, team_id: teamId })
    .first();
  if (!row) throw notFound('Attachment');
  return row;
}

// The rows behind a signed download, looked up without a team: the link's signature is then checked against the
// row's own team, so a link of one team never opens another team's object.

export async function attachmentForLink(
  db: Knex,
  emailId: string,
  id: string,
): Promise<ReceivedAttachmentRow | undefined> {
  return db<ReceivedAttachmentRow>('received_attachments').where({ id, email_id: emailId }).first();
}

export async function rawForLink(
  db: Knex,
  emailId: string,
): Promise<{ id: string; team_id: string; raw_blob_key: string | null } | undefined> {
  // A message refused as a virus is not kept (spec, dropped_reason `virus`), whatever its blob still holds.
  return db('received_messages as rm')
    .join('received_emails as re', 're.id', 'rm.id')
    .where('rm.id', emailId)
    .whereRaw(`re.dropped_reason is distinct from 'virus'`)
    .first('rm.id', 'rm.team_id', 'rm.raw_blob_key');
}
