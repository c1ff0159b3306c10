// The receive job (ARCHITECTURE, "The path of a received email", step 3): one stored message → one received
// email. The job carries only the message id; the row's status moves stored → processed in the same
// transaction that writes the email, its attachments and its event, so a duplicate or a retry is harmless.
// The stages, each in its own file: mailbox rules (here), limits (limits.ts), clamd (scan.ts), mailparser
// (parse.ts), SPF/DKIM/DMARC/ARC (authenticate.ts). A bounce-kind message goes to bounce.ts (RFC 3464 DSNs,
// RFC 5965 reports, common non-standard bounces) and never becomes an email.
//
// A dropped message is recorded with its header fields but no body and no attachments, and announces nothing
// (no email.received: a webhook consumer would fetch a body that is not there). Its raw source is deleted after
// the commit (kept inline in received_raw: in the commit), except for parse_failed, whose raw stays downloadable
// (interface spec, dropped_reason).
import type { Knex } from 'knex';
import type { BlobStore } from '../../shared/blobs.ts';
import type { Logger } from '../../shared/logger.ts';
import type { ClamdScanner } from '../../shared/clamd/client.ts';
import { newId } from '../../shared/ids.ts';
import { recordEvent } from '../../shared/events.ts';
import { findRecipient } from '../mx/recipients.ts';
import { parseMessage, type ParsedEmail } from './parse.ts';
import { processBounce } from './bounce.ts';
import { scanMessage } from './scan.ts';
import { limitVerdict } from './limits.ts';
import { withoutForgedResults, type Authentication, type Authenticator } from './authenticate.ts';
import { toStored } from '../../shared/receiving/exact-text.ts';
import { prepared } from '../../shared/db/prepared.ts';
import { dropInlineRaw, readRaw } from '../../shared/receiving/raw.ts';

export interface ReceiveDeps {
  db: Knex;
  blobs: BlobStore;
  log: Logger;
  secrets: Buffer;
  /** clamd; null or absent: scanning is off (CLAMD_ADDRESS unset). */
  scanner?: ClamdScanner | null;
  /** SPF/DKIM/DMARC/ARC verdicts; absent: none are taken (inbound/main.ts always gives one). */
  authenticator?: Authenticator;
}

type DroppedReason = 'parse_failed' | 'no_mailbox' | 'team_blocked' | 'virus' | 'daily_cap' | 'storage_quota';

interface MessageRow {
  id: string;
  team_id: string;
  /** Null: the bytes are in received_raw (shared/receiving/raw.ts). */
  raw_blob_key: string | null;
  size: number;
  envelope_from: string;
  rcpt_to: string[];
  remote_ip: string;
  helo: string;
  status: 'stored' | 'processed';
  kind: 'mail' | 'bounce';
  received_at: Date;
}

const empty: ParsedEmail = {
  from: '',
  to: [],
  cc: [],
  bcc: [],
  replyTo: [],
  subject: '',
  messageId: '',
  html: null,
  text: null,
  headers: [],
  attachments: [],
};

/** html and text as their columns hold them: the storable form, and the exact value when that loses something. */
function body(html: string | null, text: string | null) {
  const [h, t] = [toStored(html), toStored(text)];
  return { html: h.text, html_exact: h.exact, text: t.text, text_exact: t.exact };
}

// The job's statements that run once per message, as named prepared statements (shared/db/prepared.ts): planned once
// per connection rather than at every message (pg_stat_statements in the inbound suite: their planning was ~0.2 ms
// of PostgreSQL's CPU a message, more than their execution).
const MESSAGE_SQL = `select id, team_id, raw_blob_key, size, envelope_from, rcpt_to, remote_ip, helo, status, kind, received_at
  from received_messages where id = ?`;
const MARK_PROCESSED_SQL = `update received_messages set status = 'processed' where id = ? and status = 'stored'
  returning id`;
const TEAM_STATE_SQL = 'select status, deletion_status from teams where id = ?';
const INSERT_RECEIVED_SQL = `insert into received_emails (id, team_id, "from", "to", cc, bcc, reply_to, subject, message_id,
    html, html_exact, text, text_exact, headers, dropped_reason, created_at, authentication)
  values (?, ?, ?, ?::text[], ?::text[], ?::text[], ?::text[], ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?::jsonb)`;

/** Moves the row to processed unless someone already did; false means this run must not write anything. */
async function markProcessed(trx: Knex, id: string): Promise<boolean> {
  return (await prepared(trx, 'pw_receive_mark_processed', MARK_PROCESSED_SQL, [id])).length === 1;
}

/** No mailbox catches anything yet (every address at a receiving domain is a catch-all), so an address is
 * still served while its domain receives for this team: one disabled or removed since the 250 drops it. */
async function stillServed(deps: ReceiveDeps, row: MessageRow): Promise<boolean> {
  for (const address of row.rcpt_to) {
    const r = await findRecipient(deps.db, deps.secrets, address);
    if (r?.kind === 'mail' && r.teamId === row.team_id) return true;
  }
  return false;
}

/** Verdicts are values: mailauth failing on a message leaves it without verdicts, never unreceived. */
async function authenticated(deps: ReceiveDeps, row: MessageRow, raw: Buffer): Promise<Authentication | null> {
  if (!deps.authenticator) return null;
  try {
    return await deps.authenticator.authenticate(raw, { ip: row.remote_ip, helo: row.helo, sender: row.envelope_from });
  } catch (err) {
    deps.log.warn({ err, messageId: row.id }, 'receive.authentication_failed');
    return null;
  }
}

/**
 * Why a message is dropped before any work is done for it: its team is suspended or gone, no mailbox serves it
 * any more, or it is past a limit. Mail past a team's cap is not scanned, parsed for its body or authenticated;
 * the limits are decided again under the team's lock when the record is written, this first look only saves the
 * work.
 */
async function droppedUpFront(deps: ReceiveDeps, row: MessageRow): Promise<DroppedReason | null> {
  const [team] = await prepared<{ status: string; deletion_status: string }>(
    deps.db,
    'pw_receive_team_state',
    TEAM_STATE_SQL,
    [row.team_id],
  );
  // Suspended by the operator, or its deletion scheduled (shared/teams/deletion.ts): receiving is stopped.
  if (!team || team.status === 'suspended' || team.deletion_status !== 'none') return 'team_blocked';
  if (!(await stillServed(deps, row))) return 'no_mailbox';
  return limitVerdict(deps.db, row);
}

/**
 * The message scanned (unless already dropped) and parsed. A virus drops it; a message mailparser cannot read is
 * kept as parse_failed unless something dropped it first.
 */
async function examine(deps: ReceiveDeps, row: MessageRow, raw: Buffer, dropped: DroppedReason | null) {
  let viruses: string[] = [];
  if (!dropped) {
    // Throws ScanUnavailableError when clamd is configured but cannot scan: the row stays stored and is retried.
    const scan = await scanMessage(deps.scanner ?? null, raw);
    if (scan.state === 'virus') {
      dropped = 'virus';
      viruses = scan.viruses;
    }
  }
  let parsed = empty;
  try {
    parsed = await parseMessage(raw);
  } catch (err) {
    deps.log.warn({ err, messageId: row.id }, 'receive.parse_failed');
    dropped ??= 'parse_failed';
  }
  return { dropped, viruses, parsed };
}

/**
 * The header fields as stored: our Authentication-Results first, and none forged in our name. A message we did not
 * authenticate (dropped before it, or mailauth failed on it) gets ours saying so (RFC 8601 §2.2, `none`), so the
 * first field is never a verdict some other host wrote.
 */
function storedHeaders(deps: ReceiveDeps, parsed: ParsedEmail, auth: Authentication | null): [string, string][] {
  if (!deps.authenticator) return parsed.headers;
  const { authservId } = deps.authenticator;
  const others = withoutForgedResults(parsed.headers, authservId);
  return [auth?.header ?? ['Authentication-Results', `${authservId}; none`], ...others];
}

type KeptAttachment = ParsedEmail['attachments'][number] & { id: string; position: number; blobKey: string };

/** A kept message's attachments, with their ids and blob keys (idempotent: a retry writes the same keys). */
function attachmentsOf(row: MessageRow, parsed: ParsedEmail, dropped: DroppedReason | null): KeptAttachment[] {
  // A dropped message keeps its header fields (who, what) but no body and no attachments.
  if (dropped) return [];
  return parsed.attachments.map((a, position) => ({
    ...a,
    id: newId(),
    position,
    blobKey: `received/${row.team_id}/${row.id}/attachment-${position}`,
  }));
}

interface Received {
  row: MessageRow;
  parsed: ParsedEmail;
  headers: [string, string][];
  auth: Authentication | null;
  attachments: KeptAttachment[];
}

/** A message kept, or kept as parse_failed, keeps its raw source; one dropped for any other reason does not. */
const keepsRaw = (dropped: DroppedReason | null) => dropped === null || dropped === 'parse_failed';

/**
 * The received email, its attachments and (kept only) its email.received event, in the transaction that marks
 * the message processed. Answers the final dropped reason, or false when another run processed it first.
 */
async function writeReceived(
  deps: ReceiveDeps,
  m: Received,
  droppedBefore: DroppedReason | null,
): Promise<{ dropped: DroppedReason | null } | false> {
  const { row, parsed } = m;
  return deps.db.transaction(async (trx) => {
    if (!(await markProcessed(trx, row.id))) return false;
    let dropped = droppedBefore;
    if (dropped === null || dropped === 'parse_failed') {
      dropped = (await limitVerdict(trx, row, { lock: true })) ?? dropped;
    }
    if (!keepsRaw(dropped)) await dropInlineRaw(trx, row);
    const b = body(dropped ? null : parsed.html, dropped ? null : parsed.text);
    await prepared(trx, 'pw_receive_insert_email', INSERT_RECEIVED_SQL, [
      row.id,
      row.team_id,
      parsed.from,
      parsed.to,
      parsed.cc,
      parsed.bcc,
      parsed.replyTo,
      parsed.subject,
      parsed.messageId,
      b.html,
      b.html_exact,
      b.text,
      b.text_exact,
      JSON.stringify(m.headers),
      dropped,
      row.received_at,
      m.auth && !dropped ? JSON.stringify(m.auth.verdicts) : null,
    ]);
    // Only a kept message is announced; a dropped one is visible in the list with its dropped_reason.
    if (!dropped) await keepAttachmentsAndAnnounce(trx, m);
    return { dropped };
  });
}

async function keepAttachmentsAndAnnounce(trx: Knex, { row, parsed, attachments }: Received): Promise<void> {
  if (attachments.length) {
    await trx('received_attachments').insert(
      attachments.map((a) => ({
        id: a.id,
        email_id: row.id,
        team_id: row.team_id,
        position: a.position,
        filename: a.filename,
        content_type: a.contentType,
        content_disposition: a.contentDisposition,
        content_id: a.contentId,
        size: a.content.length,
        blob_key: a.blobKey,
      })),
    );
  }
  await recordEvent(trx, row.team_id, 'email.received', {
    email_id: row.id,
    created_at: row.received_at.toISOString(),
    from: parsed.from,
    to: parsed.to,
    bcc: parsed.bcc,
    cc: parsed.cc,
    received_for: row.rcpt_to,
    message_id: parsed.messageId,
    subject: parsed.subject,
    attachments: attachments.map((a) => ({
      id: a.id,
      filename: a.filename,
      content_type: a.contentType,
      content_disposition: a.contentDisposition,
      content_id: a.contentId,
    })),
  });
}

export async function processReceived(deps: ReceiveDeps, messageId: string): Promise<'processed' | 'skipped'> {
  const [row] = await prepared<MessageRow>(deps.db, 'pw_receive_message', MESSAGE_SQL, [messageId]);
  if (!row || row.status !== 'stored') return 'skipped';
  // A DSN or feedback report about one of our emails (bounce.ts): never a received email.
  if (row.kind === 'bounce') return processBounce(deps, row.id, markProcessed);

  const droppedFirst = await droppedUpFront(deps, row);
  const raw = await readRaw(deps.db, deps.blobs, row);
  if (!raw) throw new Error(`raw message missing: ${row.raw_blob_key ?? 'received_raw'}`);
  const { dropped: droppedBefore, viruses, parsed } = await examine(deps, row, raw, droppedFirst);
  const auth = droppedBefore ? null : await authenticated(deps, row, raw);
  const attachments = attachmentsOf(row, parsed, droppedBefore);
  // Blobs first (idempotent keys: a retry overwrites), rows after, in one transaction with the processed mark.
  await Promise.all(attachments.map((a) => deps.blobs.put(a.blobKey, a.content)));

  const headers = storedHeaders(deps, parsed, auth);
  const written = await writeReceived(deps, { row, parsed, headers, auth, attachments }, droppedBefore);
  if (!written) return 'skipped';
  const { dropped } = written;
  if (dropped) {
    // After the commit: a crash here leaves an orphaned blob, never a record without its raw source. Attachment
    // blobs exist only when the limits dropped the message under the lock, after they were written.
    // (Inline bytes went in the commit: dropInlineRaw.)
    const rawBlob = keepsRaw(dropped) || row.raw_blob_key === null ? [] : [row.raw_blob_key];
    const gone = [...rawBlob, ...attachments.map((a) => a.blobKey)];
    await Promise.all(gone.map((key) => deps.blobs.delete(key)));
  }
  deps.log.info(
    { messageId, dropped, viruses, attachments: dropped ? 0 : attachments.length, dmarc: auth?.verdicts.dmarc?.result },
    'receive.processed',
  );
  return 'processed';
}
