// The API shapes of received mail (spec, "Received email"): the list row, the full email, an attachment inside
// a message (no link) and an attachment from the attachments routes (with a fresh signed link), and the links
// themselves: one kind per kind of object, so a token of one never opens the other.
import type { BlobStore } from '../blobs.ts';
import type { Config } from '../config.ts';
import { issueLink, linkKey, linkUrl } from '../links/signed.ts';
import { isoRequired } from '../time.ts';
import type { ReceivedAttachmentRow, ReceivedEmailDetail, ReceivedEmailRow } from './query.ts';
import { fromStored } from './exact-text.ts';
import { attachmentFieldsOf } from '../attachment-rows.ts';

export const RECEIVED_ATTACHMENT_LINK = 'received_attachment';
export const RECEIVED_RAW_LINK = 'received_raw';
/** The file name of every raw download (spec, Receiving). */
export const RAW_FILENAME = 'raw.eml';

export const attachmentDownloadPath = (emailId: string, id: string) =>
  `/emails/receiving/${emailId}/attachments/${id}/download`;
export const rawDownloadPath = (emailId: string) => `/emails/receiving/${emailId}/raw/download`;

export type LinkConfig = Pick<Config, 'PUBLIC_BASE_URL' | 'SECRETS_KEY' | 'SECRETS_KEY_FILE'>;

/** A fresh 15-minute link to one object: the full URL a client copies as given, and when it stops working. */
export function downloadLink(
  config: LinkConfig,
  kind: string,
  teamId: string,
  objectId: string,
  path: string,
  now: Date,
) {
  const link = issueLink(linkKey(config), { kind, teamId, objectId }, now);
  return { download_url: linkUrl(config.PUBLIC_BASE_URL, path, link), expires_at: link.expires_at };
}

/**
 * The stored header block ([name, value] pairs in order) as the spec's object of name to value. Names are
 * case-insensitive (RFC 5322 §1.2.2), so they are keyed in lower case; a field that occurs more than once
 * (Received, DKIM-Signature) keeps every value, in order, joined by "\n" (a value is unfolded, so it holds no
 * newline of its own). The exact block, case and order is the raw source.
 */
export function headersObject(pairs: [string, string][]): Record<string, string> {
  const out = new Map<string, string>();
  for (const [name, value] of pairs) {
    const key = name.toLowerCase();
    const seen = out.get(key);
    out.set(key, seen === undefined ? value : `${seen}\n${value}`);
  }
  // fromEntries defines own properties: a header named `__proto__` is one more key, never a prototype.
  return Object.fromEntries(out);
}

/** An attachment inside a message: no link (spec). `content_id` only when the part carried one. */
export function presentAttachment(row: ReceivedAttachmentRow) {
  return attachmentFieldsOf(row);
}

/** An attachment from the attachments routes: with a fresh link, unless its bytes were never stored. */
export function presentLinkedAttachment(config: LinkConfig, row: ReceivedAttachmentRow, stored: boolean, now: Date) {
  const link = stored
    ? downloadLink(
        config,
        RECEIVED_ATTACHMENT_LINK,
        row.team_id,
        row.id,
        attachmentDownloadPath(row.email_id, row.id),
        now,
      )
    : {};
  return { ...presentAttachment(row), ...link };
}

/** Whether each attachment's bytes are in the blob store (a part refused storage is listed without a link). */
export async function storedFlags(blobs: BlobStore, rows: ReceivedAttachmentRow[]): Promise<boolean[]> {
  return Promise.all(rows.map(async (r) => (await blobs.size(r.blob_key)) !== null));
}

/** A list row: no html, text, headers or received_for (spec). */
export function presentListItem(row: ReceivedEmailRow, attachments: ReceivedAttachmentRow[]) {
  return {
    id: row.id,
    to: row.to,
    from: row.from,
    subject: row.subject,
    message_id: row.message_id,
    bcc: row.bcc,
    cc: row.cc,
    reply_to: row.reply_to,
    dropped_reason: row.dropped_reason,
    created_at: isoRequired(row.created_at),
    attachments: attachments.map(presentAttachment),
  };
}

/**
 * The full received email. The raw source itself is never inline; `raw` is a fresh link to it (the reference
 * SDK's `receiving.forward()` downloads it), null when no raw source is kept.
 */
export function presentReceived(
  row: ReceivedEmailDetail,
  attachments: ReceivedAttachmentRow[],
  raw: { download_url: string; expires_at: string } | null,
) {
  return {
    object: 'email' as const,
    ...presentListItem(row, attachments),
    received_for: row.rcpt_to,
    html: fromStored(row.html, row.html_exact),
    text: fromStored(row.text, row.text_exact),
    headers: headersObject(row.headers),
    raw,
  };
}

/** The raw link of a received email, or null when its source is not kept (refused as a virus, or gone: `kept`,
 * shared/receiving/raw.ts). */
export function rawLink(config: LinkConfig, row: ReceivedEmailDetail, kept: boolean, now: Date) {
  if (row.dropped_reason === 'virus' || !kept) return null;
  return downloadLink(config, RECEIVED_RAW_LINK, row.team_id, row.id, rawDownloadPath(row.id), now);
}
