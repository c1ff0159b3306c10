// Step two of accepting a send: write the email, its recipients, its attachments and its first events (email.sent, or
// email.scheduled; email.suppressed for each suppressed recipient) in ONE statement, composed by email-statement.ts
// (atomic on its own: one send is one autocommitted statement, no BEGIN/COMMIT round trips; a batch, a team with
// send quotas or a caller with work of its own runs the statements in one transaction). A submitted message is
// written by the statement too (email_raw) unless it is over RAW_INLINE_MAX_BYTES. Attachment bytes (and such a
// large message) go to the blob store first (durably); a refused or rolled-back send leaves no row without its
// bytes, and its blobs are removed. The commit keeps the server's synchronous_commit: the answer follows the WAL
// flush.
import type { Knex } from 'knex';
import type { BlobStore } from '../blobs.ts';
import type { Config } from '../config.ts';
import { newId } from '../ids.ts';
import { ServiceError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { prepared as preparedQuery } from '../db/prepared.ts';
import { bulkRefusal, checkQuota } from './rules.ts';
import type { EmailRow } from './present.ts';
import type { Caller, PreparedEmail } from './prepare.ts';
import { storeAnswer } from '../idempotency/store.ts';
import { emailStatement, type InCommitAnswer, type Statement } from './email-statement.ts';

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
    emailStatement(ctx.config, caller, p, ids[i], attachmentRows[i], rawKeys[i], now, alone ? answer : undefined),
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
