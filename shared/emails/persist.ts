// Step two of accepting a send: write the email, its recipients, its attachments and its first events in ONE
// transaction. Attachment bytes go to the blob store first (durably); a rolled-back send leaves only
// unreferenced blobs, never a row without its bytes.
import type { Knex } from 'knex';
import type { BlobStore } from '../blobs.ts';
import type { Config } from '../config.ts';
import { newId } from '../ids.ts';
import { eventRow, insertEvents, type EventRow } from '../events.ts';
import { formatMailbox } from './addresses.ts';
import { bulkCounterUpsert, checkBulk, checkQuota, contentHash } from './rules.ts';
import { emailEventData, type EmailRow } from './present.ts';
import type { PreparedEmail, Sender } from './prepare.ts';

export interface PersistContext {
  config: Config;
  blobs: BlobStore;
}

async function writeAttachments(blobs: BlobStore, teamId: string, emailId: string, p: PreparedEmail) {
  return Promise.all(p.attachments.map(async (a, position) => {
    const blob_key = `emails/${teamId}/${emailId}/attachment-${position}`;
    await blobs.put(blob_key, a.content);
    return { id: newId(), email_id: emailId, team_id: teamId, position, filename: a.filename, content_type: a.content_type,
      content_id: a.content_id, content_disposition: a.content_disposition, size: a.content.length, blob_key };
  }));
}

/**
 * Persists prepared sends (one, or a batch) together; answers their rows in order. `inTransaction` runs last,
 * inside the same transaction (the send routes store their Idempotency-Key answer there, so a crash can never
 * leave an accepted email whose key would let a retry send it again).
 */
export async function persistEmails(
  db: Knex, ctx: PersistContext, sender: Sender, prepared: PreparedEmail[], now: Date,
  inTransaction?: (trx: Knex, rows: EmailRow[]) => Promise<void>,
): Promise<EmailRow[]> {
  const ids = prepared.map(() => newId());
  const attachmentRows = await Promise.all(prepared.map((p, i) => writeAttachments(ctx.blobs, sender.team.id, ids[i], p)));
  const rawKeys = await Promise.all(prepared.map(async (p, i) => {
    if (!p.raw) return null;
    const key = `emails/${sender.team.id}/${ids[i]}/raw.eml`;
    await ctx.blobs.put(key, p.raw.bytes);
    return key;
  }));
  return db.transaction(async (trx) => {
    // Quotas are counted under the team's row lock, so two concurrent sends cannot both slip under the limit. A
    // team without limits (as its key's lookup saw it a moment ago) skips the lock and the counting.
    if (sender.team.daily_send_limit != null || sender.team.monthly_send_limit != null) {
      const limits = await trx('teams').where({ id: sender.team.id }).select('daily_send_limit', 'monthly_send_limit').forUpdate().first();
      await checkQuota(trx, { id: sender.team.id, ...limits }, prepared.length, now);
    }
    const rows: EmailRow[] = [];
    for (const [i, p] of prepared.entries()) {
      // One statement per email (its row, recipients, attachments, bulk counter and first events), so a send
      // costs BEGIN, this and COMMIT.
      const id = ids[i];
      const queued = p.recipients.filter((r) => r.status === 'queued');
      const scheduled = p.scheduled_at !== null && p.scheduled_at.getTime() > now.getTime();
      const allSuppressed = queued.length === 0;
      const values = {
        id, team_id: sender.team.id, domain_id: p.domain.id, api_key_id: sender.key?.id ?? null, source: sender.source,
        from: formatMailbox(p.from), from_address: p.from.address, to: p.to, cc: p.cc, bcc: p.bcc, reply_to: p.reply_to,
        subject: p.subject, html: p.html, text: p.text, headers: JSON.stringify(p.headers) as never, tags: JSON.stringify(p.tags) as never,
        message_id: p.raw?.messageId ?? `<${id}@${p.domain.name}>`,
        raw_blob_key: rawKeys[i],
        status: allSuppressed ? 'done' : scheduled ? 'scheduled' : 'queued',
        last_event: allSuppressed ? (p.recipients.some((r) => r.status === 'suppressed') ? 'suppressed' : 'failed') : scheduled ? 'scheduled' : 'queued',
        scheduled_at: p.scheduled_at, size_bytes: p.size, created_at: now, updated_at: now,
      };
      // What the events say of the email, from the values written (emailEventData reads only these).
      const shown = { ...values, tags: p.tags } as unknown as EmailRow;
      const events: EventRow[] = [];
      if (scheduled) events.push(eventRow(sender.team.id, 'email.scheduled', emailEventData(shown)));
      for (const r of p.recipients.filter((x) => x.status === 'suppressed')) {
        const reason = r.suppression?.origin === 'complaint' ? 'previous_complaint' : 'previous_bounce';
        events.push(eventRow(sender.team.id, 'email.suppressed', emailEventData(shown, {
          to: [r.address],
          suppressed: { type: 'OnAccountSuppressionList', reason, message: `${r.address} is on the team's suppression list.` },
        })));
      }
      let q = trx.queryBuilder()
        .with('email', trx('emails').insert(values).returning('*'))
        .with('recipient_rows', trx('email_recipients').insert(p.recipients.map((r) => ({
          id: newId(), email_id: id, team_id: sender.team.id, address: r.address, domain: r.domain, kind: r.kind, status: r.status,
          last_response: r.reason, next_attempt_at: r.status === 'queued' ? (scheduled ? p.scheduled_at : now) : null, updated_at: now,
        }))));
      if (attachmentRows[i].length) q = q.with('attachment_rows', trx('email_attachments').insert(attachmentRows[i]));
      if (events.length) q = q.with('first_events', insertEvents(trx, events));
      const bulk = !p.unsubscribe && queued.length > 0;
      if (bulk) q = q.with('bulk', bulkCounterUpsert(trx, sender.team.id, contentHash(p.from.address, p.subject, p.html, p.text), queued.length, now));
      const [row] = await q.from('email').select('email.*', bulk ? trx.raw('(select recipients from bulk) as bulk_recipients') : trx.raw('null as bulk_recipients'));
      const { bulk_recipients: bulkCount, ...email } = row as EmailRow & { bulk_recipients: number | null };
      // Past the bulk rule's limit the send is refused, and the transaction (the counter with it) rolls back.
      if (bulk) checkBulk(bulkCount!, ctx.config.BULK_DAILY_LIMIT, ctx.config.BULK_DOCS_URL);
      rows.push(email as EmailRow);
    }
    await inTransaction?.(trx, rows);
    return rows;
  });
}
