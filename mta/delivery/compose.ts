// The message to send: an API send is built with nodemailer's MailComposer from the email row and its attachment
// blobs, its tree written out in one pass (shared/lib-internals/nodemailer-mime-build.ts). The build is deterministic
// (Message-ID and Date from the row, MIME boundaries derived from the email id), so a job that composes again after a
// crash sends the bytes an earlier one sent. A first attempt sends from memory; only when a recipient is deferred is
// the message stored as `emails/<team>/<id>.<random>.eml` and named by raw_blob_key, so every later attempt (and
// every copy of the mta) sends those bytes even across an upgrade of the composer. An SMTP-submitted email already has
// its raw message (in email_raw, or a blob when large). Signing happens per attempt on top of these bytes (sign.ts).
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import MailComposer from 'nodemailer/lib/mail-composer';
import type { BlobStore } from '../../shared/blobs.ts';
import { buildMessage } from '../../shared/lib-internals/nodemailer-mime-build.ts';
import type { EmailRow } from '../../shared/emails/present.ts';
import { unsubscribeToken } from '../../shared/emails/mail-tokens.ts';

export interface ComposeDeps {
  db: Knex;
  blobs: BlobStore;
}

export interface UnsubscribeDeps {
  secrets: Buffer;
  /** PUBLIC_BASE_URL: the api's address, where the unsubscribe page lives (api/routes/unsubscribe.ts). */
  publicBaseUrl: string;
}

export interface AttachmentRow {
  filename: string | null;
  content_type: string;
  content_id: string | null;
  content_disposition: 'attachment' | 'inline';
  blob_key: string;
}

async function readBlob(blobs: BlobStore, key: string): Promise<Buffer> {
  const data = await blobs.get(key);
  if (!data) throw new Error(`blob ${key} is missing`);
  return data;
}

const hasHeader = (headers: Record<string, string>, name: string) =>
  Object.keys(headers).some((h) => h.toLowerCase() === name);

/**
 * List-Unsubscribe with RFC 8058 one-click, for mail sent under a topic or as a broadcast unless the customer set
 * their own: the header fields to put in front of one recipient's copy, or '' when the email needs none. The URL
 * names the recipient (RFC 8058 §3.1: the POST carries nothing else), so each such recipient gets a copy of its
 * own (job.ts); the composed message, stored for retries, has none.
 */
export function unsubscribeHeader(deps: UnsubscribeDeps, email: EmailRow, recipientId: string): string {
  if (!needsUnsubscribeHeader(email)) return '';
  const url = `${deps.publicBaseUrl}/unsubscribe/${unsubscribeToken(deps.secrets, recipientId)}`;
  return `List-Unsubscribe: <${url}>\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n`;
}

/** Does each recipient get a copy with its own List-Unsubscribe (unsubscribeHeader)? */
export function needsUnsubscribeHeader(email: EmailRow): boolean {
  return (email.topic_id !== null || email.source === 'broadcast') && !hasHeader(email.headers, 'list-unsubscribe');
}

/** The shared part of the message's MIME boundaries: a function of the email, so a recomposition is identical. */
const boundaryOf = (emailId: string) => createHash('sha256').update(`boundary:${emailId}`).digest('hex').slice(0, 16);

/**
 * An email row as the deliver job loads it: with its submitted message when email_raw holds it, or its attachment
 * rows when it has no stored message yet.
 */
export type LoadedEmail = EmailRow & { attachments?: AttachmentRow[] | null; raw?: Buffer | null };

export async function composeMessage(deps: ComposeDeps, db: Knex, email: LoadedEmail): Promise<Buffer> {
  const attachments: AttachmentRow[] =
    email.attachments ??
    (await db.raw('select * from email_attachments where email_id = ? order by position', [email.id])).rows;
  const composer = new MailComposer({
    from: email.from,
    to: email.to,
    ...(email.cc.length ? { cc: email.cc } : {}),
    ...(email.reply_to.length ? { replyTo: email.reply_to } : {}),
    subject: email.subject,
    ...(email.text !== null ? { text: email.text } : {}),
    ...(email.html !== null ? { html: email.html } : {}),
    headers: email.headers,
    messageId: email.message_id,
    date: email.created_at,
    baseBoundary: boundaryOf(email.id),
    attachments: await Promise.all(
      attachments.map(async (a) => ({
        content: await readBlob(deps.blobs, a.blob_key),
        contentType: a.content_type,
        contentDisposition: a.content_disposition,
        ...(a.filename ? { filename: a.filename } : { filename: false as const }),
        ...(a.content_id ? { cid: a.content_id.replace(/^<|>$/g, '') } : {}),
      })),
    ),
  });
  return crlfLines(await buildMessage(composer.compile()));
}

const CR = 0x0d;
const LF = 0x0a;

/**
 * `message` with every line ending in CRLF (RFC 5322 §2.1): MailComposer writes a 7bit text part as it was given,
 * bare LFs and all. The bytes are sent with CRLF anyway; giving them CRLF here, once, also spares DKIM's relaxed body
 * canonicalization its slow path (a new buffer for each line it must mend) and leaves the DATA payload nothing to
 * convert. A relaxed body hash is the same either way (it reads a bare LF as CRLF). A bare CR stays as it is.
 */
export function crlfLines(message: Buffer): Buffer {
  let bare = 0;
  for (let lf = message.indexOf(LF); lf !== -1; lf = message.indexOf(LF, lf + 1)) if (message[lf - 1] !== CR) bare++;
  if (bare === 0) return message;
  const out = Buffer.allocUnsafe(message.length + bare);
  let from = 0;
  let to = 0;
  for (let lf = message.indexOf(LF); lf !== -1; lf = message.indexOf(LF, lf + 1)) {
    if (message[lf - 1] === CR) continue;
    to += message.copy(out, to, from, lf);
    out[to++] = CR;
    from = lf;
  }
  message.copy(out, to, from);
  return out;
}

/**
 * Header fixes for a stored message before it leaves: Message-ID and Date when missing (RFC 5322 §3.6 wants
 * both; a submitting client may leave them to us), and no Bcc or Return-Path (RFC 5321 §4.4: the receiving
 * MTA adds Return-Path; a Bcc header would tell every recipient who else got it).
 */
export function finishHeaders(raw: Buffer, email: Pick<EmailRow, 'message_id' | 'created_at'>): Buffer {
  const text = raw.toString('latin1');
  const crlf = text.indexOf('\r\n\r\n');
  const lf = text.indexOf('\n\n');
  const end = crlf >= 0 && (lf < 0 || crlf < lf) ? crlf + 2 : lf >= 0 ? lf + 1 : text.length;
  const nl = text.includes('\r\n') ? '\r\n' : '\n';
  const fields = text
    .slice(0, end)
    .split(/(?=^[^\s:][^:\r\n]*:)/m)
    .filter((f) => f.length > 0);
  const name = (f: string) => f.slice(0, f.indexOf(':')).trim().toLowerCase();
  const kept = fields.filter((f) => !['bcc', 'resent-bcc', 'return-path'].includes(name(f)));
  const added: string[] = [];
  if (!kept.some((f) => name(f) === 'message-id')) added.push(`Message-ID: ${email.message_id}${nl}`);
  if (!kept.some((f) => name(f) === 'date'))
    added.push(`Date: ${email.created_at.toUTCString().replace('GMT', '+0000')}${nl}`);
  if (added.length === 0 && kept.length === fields.length) return raw;
  return Buffer.concat([Buffer.from(added.join('') + kept.join(''), 'latin1'), raw.subarray(end)]);
}

export interface Message {
  raw: Buffer;
  /** Composed by this job and not stored yet (keepComposedMessage stores it when a retry will need it). */
  composed: boolean;
}

/** The bytes to sign and send for `email`: its stored message, or a new (deterministic) composition. */
export async function messageOf(deps: ComposeDeps, email: LoadedEmail): Promise<Message> {
  if (email.raw) return { raw: finishHeaders(email.raw, email), composed: false };
  if (email.raw_blob_key)
    return { raw: finishHeaders(await readBlob(deps.blobs, email.raw_blob_key), email), composed: false };
  return { raw: await composeMessage(deps, deps.db, email), composed: true };
}

/**
 * Stores a composed message for the retries, once a recipient was deferred: the blob is durable, then one
 * conditional update (raw_blob_key still null) names it; should two jobs ever store at once, the loser drops its
 * copy (the bytes are the same). A crash before this leaves the retry to compose the same bytes again.
 */
export async function keepComposedMessage(
  deps: Pick<ComposeDeps, 'db' | 'blobs'>,
  email: EmailRow,
  raw: Buffer,
  now: Date,
): Promise<void> {
  const key = `emails/${email.team_id}/${email.id}.${randomBytes(4).toString('hex')}.eml`;
  await deps.blobs.put(key, raw);
  const [stored] = await deps
    .db('emails')
    .where({ id: email.id })
    .whereNull('raw_blob_key')
    .update({ raw_blob_key: key, size_bytes: raw.length, updated_at: now })
    .returning('id');
  if (!stored) await deps.blobs.delete(key);
}
