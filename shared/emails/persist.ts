// Step two of accepting a send: write the email, its recipients, its attachments and its first events (email.sent, or
// email.scheduled; email.suppressed for each suppressed recipient) in ONE statement (atomic on its own: one send is one
// autocommitted statement, no BEGIN/COMMIT round trips; a batch, a team with send quotas or a caller with work of its
// own runs the statements in one transaction). A submitted message is written by the statement too (email_raw) unless
// it is over RAW_INLINE_MAX_BYTES. Attachment bytes (and such a large message) go to the blob store first (durably); a
// refused or rolled-back send leaves no row without its bytes, and its blobs are removed. The commit keeps the server's
// synchronous_commit: the answer follows the WAL flush.
import type { Knex } from 'knex';
import type { BlobStore } from '../blobs.ts';
import type { Config } from '../config.ts';
import { newId } from '../ids.ts';
import { ServiceError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { eventRow, type EventRow } from '../events.ts';
import { formatMailbox } from './addresses.ts';
import { prepared as preparedQuery } from '../db/prepared.ts';
import { bulkRefusal, checkQuota, contentHash } from './rules.ts';
import { emailEventData, type EmailRow } from './present.ts';
import type { Caller, PreparedEmail, PreparedRecipient } from './prepare.ts';
import { answerUpdate, storeAnswer, type Reservation } from '../idempotency/store.ts';
import { topicSuppressed } from '../topics/subscriptions.ts';
import { emailState } from './last-event.ts';

export interface PersistContext {
  config: Config;
  blobs: BlobStore;
  log?: Logger;
}

/**
 * A submitted message up to this size is kept in the email_raw table by the accept statement itself; a larger one
 * goes to the blob store first (emails.raw_blob_key). Most mail is far below it, and a row this size is still a
 * cheap parameter and a cheap read for the deliver job (migration 20261124010000 tells why).
 */
export const RAW_INLINE_MAX_BYTES = 512 * 1024;

async function writeAttachments(blobs: BlobStore, teamId: string, emailId: string, p: PreparedEmail) {
  return Promise.all(
    p.attachments.map(async (a, position) => {
      // Files in the team's directory, not a directory per email: no mkdir and no parent fsync per send (blobs.ts).
      const blob_key = `emails/${teamId}/${emailId}.attachment-${position}`;
      await blobs.put(blob_key, a.content);
      return {
        id: newId(),
        email_id: emailId,
        team_id: teamId,
        position,
        filename: a.filename,
        content_type: a.content_type,
        content_id: a.content_id,
        content_disposition: a.content_disposition,
        size: a.content.length,
        blob_key,
      };
    }),
  );
}

/** The Idempotency-Key answer to store with the email(s), by their own statement or in their transaction. */
export interface InCommitAnswer {
  reservation: Reservation;
  status: number;
  body(ids: string[]): unknown;
}

const EMAIL_COLUMNS = [
  'id',
  'team_id',
  'domain_id',
  'api_key_id',
  'source',
  'from',
  'from_address',
  'to',
  'cc',
  'bcc',
  'reply_to',
  'subject',
  'html',
  'text',
  'headers',
  'tags',
  'topic_id',
  'message_id',
  'raw_blob_key',
  'status',
  'last_event',
  'scheduled_at',
  'size_bytes',
  'request_id',
  'created_at',
  'updated_at',
] as const;
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
 * OnAccountSuppressionList, with the entry's origin as the reason), or not subscribed to the send's topic.
 */
function suppressedData(r: PreparedRecipient, topic: PreparedEmail['topic']) {
  const origin = r.suppression?.origin;
  if (origin === 'topic' && topic) return topicSuppressed(r.address, topic);
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

interface Statement {
  /** The prepared statement's name: one per shape of the SQL text. */
  name: string;
  sql: string;
  bindings: unknown[];
  row: EmailRow;
  bulk: boolean;
}

/**
 * One email as one statement: its row, recipients, attachments and first events, the bulk rule's counter and,
 * last in a send, the Idempotency-Key answer. The bulk rule is decided inside: the counter is raised only while
 * the day's count stays within the limit, and every insert depends on that raise, so a refused send writes
 * nothing (the statement answers no row and the caller refuses it).
 */
function emailStatement(
  ctx: PersistContext,
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
  const queued = p.recipients.filter((r) => r.status === 'queued');
  const scheduled = p.scheduled_at !== null && p.scheduled_at.getTime() > now.getTime();
  const allSuppressed = queued.length === 0;
  // The one rule (last-event.ts) from the recipients as accepted; a scheduled email shows `scheduled` until its
  // release.
  const initial = scheduled ? 'scheduled' : 'queued';
  const state = emailState(
    { last_event: initial, status: initial },
    p.recipients.map((r) => ({ status: r.status, delay_notified: false })),
  );
  const row: EmailRow = {
    id,
    team_id: teamId,
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
  // What the events say of the email, from the values written (emailEventData reads only these).
  // email.sent as Resend has it: the request succeeded and delivery will be attempted (a scheduled send's comes at
  // its release, shared/emails/store.ts releaseDue).
  const events: EventRow[] = [];
  if (scheduled) events.push(eventRow(teamId, 'email.scheduled', emailEventData(row)));
  else if (!allSuppressed) events.push(eventRow(teamId, 'email.sent', emailEventData(row)));
  for (const r of p.recipients.filter((x) => x.status === 'suppressed')) {
    events.push(
      eventRow(
        teamId,
        'email.suppressed',
        emailEventData(row, { to: [r.address], suppressed: suppressedData(r, p.topic) }),
      ),
    );
  }
  const recipients = p.recipients.map((r) => ({
    id: newId(),
    email_id: id,
    team_id: teamId,
    address: r.address,
    domain: r.domain,
    kind: r.kind,
    status: r.status,
    last_response: r.reason,
    next_attempt_at: r.status === 'queued' ? (scheduled ? p.scheduled_at : now) : null,
    updated_at: now,
  }));

  const ctes: string[] = [];
  const bindings: unknown[] = [];
  const bulk = !p.unsubscribe && queued.length > 0;
  if (bulk) {
    // The day's counter for this content, raised only while it stays within the limit (a first send above the
    // limit inserts nothing either). ON CONFLICT ... WHERE locks the row even when it does not update it.
    const limit = ctx.config.BULK_DAILY_LIMIT;
    ctes.push(`bulk as (insert into bulk_counters (team_id, day, content_hash, recipients) select ?::uuid, ?::date, ?::text, ?::int where ?::int <= ?::int
      on conflict (team_id, day, content_hash) do update set recipients = bulk_counters.recipients + excluded.recipients
      where bulk_counters.recipients + excluded.recipients <= ?::int returning recipients)`);
    bindings.push(
      teamId,
      now.toISOString().slice(0, 10),
      contentHash(p.from.address, p.subject, p.html, p.text),
      queued.length,
      queued.length,
      limit,
      limit,
    );
  }
  ctes.push(`email as (${EMAIL_INSERT}${bulk ? ' where exists (select 1 from bulk)' : ''} returning id)`);
  for (const c of EMAIL_COLUMNS) {
    const v = row[c];
    bindings.push(c === 'headers' || c === 'tags' ? JSON.stringify(v) : v);
  }
  ctes.push(`recipient_rows as (insert into email_recipients (id, email_id, team_id, address, domain, kind, status, last_response, next_attempt_at, updated_at)
    select r.id, r.email_id, r.team_id, r.address, r.domain, r.kind, r.status, r.last_response, r.next_attempt_at, r.updated_at
    from email, json_populate_recordset(null::email_recipients, ?::json) r)`);
  bindings.push(JSON.stringify(recipients));
  if (attachments.length) {
    ctes.push(`attachment_rows as (insert into email_attachments (id, email_id, team_id, position, filename, content_type, content_id, content_disposition, size, blob_key)
      select a.id, a.email_id, a.team_id, a.position, a.filename, a.content_type, a.content_id, a.content_disposition, a.size, a.blob_key
      from email, json_populate_recordset(null::email_attachments, ?::json) a)`);
    bindings.push(JSON.stringify(attachments));
  }
  if (inlineRaw) {
    ctes.push(
      'raw_row as (insert into email_raw (email_id, team_id, bytes) select email.id, ?::uuid, ?::bytea from email)',
    );
    bindings.push(teamId, inlineRaw);
  }
  if (events.length) {
    ctes.push(`first_events as (insert into events (id, team_id, type, data) select e.id, e.team_id, e.type, e.data
      from email, json_populate_recordset(null::events, ?::json) e)`);
    bindings.push(
      `[${events.map((e) => `{"id":${JSON.stringify(e.id)},"team_id":${JSON.stringify(e.team_id)},"type":${JSON.stringify(e.type)},"data":${e.data}}`).join(',')}]`,
    );
  }
  if (answer) {
    const update = answerUpdate(answer.reservation, answer.status, answer.body([id]));
    ctes.push(`answer as (${update.sql} and exists (select 1 from email))`);
    bindings.push(...update.bindings);
  }
  const name = `pw_email_${[bulk, attachments.length > 0, events.length > 0, !!answer, !!inlineRaw].map(Number).join('')}`;
  return { name, sql: `with ${ctes.join(',\n')}\nselect count(*)::int as written from email`, bindings, row, bulk };
}

/**
 * A send the bulk rule refused inside a batch, at its position in `prepared`: the caller's to decide (permissive
 * batches report it and go on; throwing refuses the whole batch).
 */
export type OnRefused = (position: number, err: ServiceError) => void;

/** Blobs of sends that were refused or rolled back: no row names them, so nothing else would ever remove them. */
async function dropBlobs(ctx: PersistContext, keys: (string | null)[], log: (err: unknown) => void): Promise<void> {
  await Promise.all(keys.filter((k): k is string => k !== null).map((k) => ctx.blobs.delete(k).catch(log)));
}

/**
 * Persists prepared sends (one, or a batch) together; answers the rows written, in order. `answer`: the
 * Idempotency-Key answer, stored by the email's own statement (one send) or after the emails in their
 * transaction (a batch, a team with quotas), for the ids written. `onRefused`: see OnRefused; without it a bulk
 * refusal refuses everything. A refused or failed send leaves none of its blobs behind.
 */
export async function persistEmails(
  db: Knex,
  ctx: PersistContext,
  caller: Caller,
  prepared: PreparedEmail[],
  now: Date,
  onRefused?: OnRefused,
  answer?: InCommitAnswer,
): Promise<EmailRow[]> {
  const ids = prepared.map(() => newId());
  const attachmentRows = await Promise.all(
    prepared.map((p, i) => writeAttachments(ctx.blobs, caller.team.id, ids[i], p)),
  );
  const rawKeys = await Promise.all(
    prepared.map(async (p, i) => {
      if (!p.raw || p.raw.bytes.length <= RAW_INLINE_MAX_BYTES) return null;
      const key = `emails/${caller.team.id}/${ids[i]}.raw.eml`;
      await ctx.blobs.put(key, p.raw.bytes);
      return key;
    }),
  );
  const blobsOf = (i: number) => [...attachmentRows[i].map((a) => a.blob_key), rawKeys[i]];
  const logFailedDelete = (err: unknown) => ctx.log?.warn({ err }, 'emails.blob_cleanup_failed');
  const hasQuota = caller.team.daily_send_limit != null || caller.team.monthly_send_limit != null;
  // One send on its own is one autocommitted statement; a batch (even of one), or a team with quotas, a transaction.
  const alone = prepared.length === 1 && !hasQuota && !onRefused;
  const statements = prepared.map((p, i) =>
    emailStatement(ctx, caller, p, ids[i], attachmentRows[i], rawKeys[i], now, alone ? answer : undefined),
  );
  /** The email's row, or null when the bulk rule refused it (its statement then wrote nothing). */
  const run = async (q: Knex, s: Statement) => {
    const rows = await preparedQuery<{ written: number }>(q, s.name, s.sql, s.bindings);
    return rows[0].written === 0 && s.bulk ? null : s.row;
  };
  const refusal = () => bulkRefusal(ctx.config.BULK_DAILY_LIMIT, ctx.config.BULK_DOCS_URL);
  try {
    if (alone) {
      const row = await run(db, statements[0]);
      if (!row) throw refusal();
      return [row];
    }
    return await db.transaction(async (trx) => {
      // Quotas are counted under the team's row lock, so two concurrent sends cannot both slip under the limit. A
      // team without limits (as its key's lookup saw it a moment ago) skips the lock and the counting.
      if (hasQuota) {
        const limits = await trx('teams')
          .where({ id: caller.team.id })
          .select('daily_send_limit', 'monthly_send_limit')
          .forUpdate()
          .first();
        await checkQuota(trx, { id: caller.team.id, ...limits }, prepared.length, now);
      }
      const rows: EmailRow[] = [];
      for (const [i, s] of statements.entries()) {
        const row = await run(trx, s);
        if (row) {
          rows.push(row);
          continue;
        }
        // Past the bulk rule's limit: thrown, the emails before it roll back; reported, the batch goes on.
        const err = refusal();
        if (!onRefused) throw err;
        onRefused(i, err);
        await dropBlobs(ctx, blobsOf(i), logFailedDelete);
      }
      if (answer) await storeAnswer(trx, answer.reservation, answer.status, answer.body(rows.map((r) => r.id)));
      return rows;
    });
  } catch (err) {
    // A refusal of ours is thrown before any COMMIT is sent, so nothing of these sends was written. Any other error
    // (a connection lost during COMMIT, say) may come after a commit: their blobs stay, a leak rather than a loss.
    if (err instanceof ServiceError)
      await dropBlobs(
        ctx,
        prepared.flatMap((_, i) => blobsOf(i)),
        logFailedDelete,
      );
    throw err;
  }
}
