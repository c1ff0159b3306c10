// Deleting a received email (spec, Receiving 5): permanent, and the stored objects go with the record. The
// message row goes (its email and attachment rows cascade), which is what returns the bytes to the team's
// allowance (the sum of its remaining `received_messages.size`); then the blobs go. The MX gives each team's
// copy of a message its own raw blob (inbound/mx/store.ts), but a blob another row still names is kept all the
// same: deleting one team's copy must never take another's bytes.
import type { Knex } from 'knex';
import type { BlobStore } from '../blobs.ts';

export interface DeletedReceived {
  id: string;
  /** Blobs that could not be removed (left orphaned; no row names them any more). */
  failed: { key: string; error: unknown }[];
}

/** Deletes the team's received email `id`; null when the team has no such received email. */
export async function deleteReceived(
  db: Knex,
  blobs: BlobStore,
  teamId: string,
  id: string,
): Promise<DeletedReceived | null> {
  return deleteWhole(db, blobs, teamId, id, () => undefined);
}

/**
 * Dropped records past their team's data retention window (spec, Receiving: a dropped record ages out and, like
 * a deleted message, is removed whole and answers 404), oldest first, at most `limit` a call: each goes as
 * deleteReceived removes a message, its blobs after its commit. Answers how many went.
 */
export async function purgeAgedDropped(db: Knex, blobs: BlobStore, now: Date, limit = 500): Promise<number> {
  const aged: { id: string; team_id: string }[] = await db('received_emails as e')
    .join('teams as t', 't.id', 'e.team_id')
    .whereNotNull('e.dropped_reason')
    .whereRaw(`e.created_at < ?::timestamptz - make_interval(days => t.data_retention_days)`, [now])
    .orderBy('e.created_at')
    .limit(limit)
    .select('e.id', 'e.team_id');
  let removed = 0;
  for (const row of aged) {
    // Still dropped when deleted: the check and the delete are one statement.
    const done = await deleteWhole(db, blobs, row.team_id, row.id, (q) =>
      q.whereNotNull('received_emails.dropped_reason'),
    );
    if (done) removed += 1;
  }
  return removed;
}

async function deleteWhole(
  db: Knex,
  blobs: BlobStore,
  teamId: string,
  id: string,
  only: (q: Knex.QueryBuilder) => void,
): Promise<DeletedReceived | null> {
  const keys = await db.transaction(async (trx) => {
    const attachments: { blob_key: string }[] = await trx('received_attachments')
      .where({ email_id: id, team_id: teamId })
      .select('blob_key');
    // Only a received email (a message the receive job turned into one) is the API's to delete; the conditional
    // delete makes two concurrent deletes one 200 and one 404, and only the first removes blobs.
    const [message]: { raw_blob_key: string | null }[] = await trx('received_messages')
      .where({ id, team_id: teamId })
      .whereExists((q) => {
        q.select(trx.raw('1')).from('received_emails').where('received_emails.id', id);
        only(q);
      })
      .del()
      .returning(['raw_blob_key']);
    if (!message) return null;
    // Bytes kept in received_raw went with the row (its foreign key cascades); blobs go after the commit.
    const raw = message.raw_blob_key === null ? [] : [message.raw_blob_key];
    const candidates = [...new Set([...raw, ...attachments.map((a) => a.blob_key)])];
    const [rawUsers, attachmentUsers] = await Promise.all([
      trx('received_messages').whereIn('raw_blob_key', candidates).pluck('raw_blob_key'),
      trx('received_attachments').whereIn('blob_key', candidates).pluck('blob_key'),
    ]);
    const stillNamed = new Set<string>([...rawUsers, ...attachmentUsers]);
    return candidates.filter((k) => !stillNamed.has(k));
  });
  if (!keys) return null;
  // After the commit: a crash in between leaves orphan bytes, never a row that names missing ones.
  const results = await Promise.allSettled(keys.map((k) => blobs.delete(k)));
  const failed = results.flatMap((r, i) =>
    r.status === 'rejected' ? [{ key: keys[i], error: r.reason as unknown }] : [],
  );
  return { id, failed };
}
