// Where an accepted message's bytes are until the receive job has processed it (migration 20261129060000): up to
// RAW_INLINE_MAX_BYTES in received_raw, written by the MX's one statement before the 250; a larger one in the blob
// store, written (durably) before that statement. The receive job reads them from either (readStoredRaw), writes
// an inline copy it keeps to the blob store before its commit (keepRaw), and deletes the inline row in the
// transaction that marks the message processed (dropInlineRaw): from then on the message's raw_blob_key names its
// bytes, as for every message before this table existed. A crash between the blob write and that commit leaves the
// row stored and its bytes in both places; the retry writes the same blob again.
import type { Knex } from 'knex';
import type { BlobStore } from '../blobs.ts';
import { prepared } from '../db/prepared.ts';
import { RAW_INLINE_MAX_BYTES } from '../emails/persist.ts';

export { RAW_INLINE_MAX_BYTES };

/** A stored message's bytes, and whether they are still in received_raw. */
export interface StoredRaw {
  raw: Buffer;
  inline: boolean;
}

const READ_SQL = 'select bytes from received_raw where message_id = ?';
const DELETE_SQL = 'delete from received_raw where message_id = ?';

/** The bytes of an accepted message not yet processed (or of any message: the blob once processed); null if none. */
export async function readStoredRaw(
  db: Knex,
  blobs: BlobStore,
  row: { id: string; raw_blob_key: string },
): Promise<StoredRaw | null> {
  const [inline] = await prepared<{ bytes: Buffer }>(db, 'pw_received_raw_read', READ_SQL, [row.id]);
  if (inline) return { raw: inline.bytes, inline: true };
  const raw = await blobs.get(row.raw_blob_key);
  return raw ? { raw, inline: false } : null;
}

/** Before the processing commit: an inline message that is kept goes to the blob store (durably). */
export async function keepRaw(blobs: BlobStore, key: string, stored: StoredRaw): Promise<void> {
  if (stored.inline) await blobs.put(key, stored.raw);
}

/** In the processing transaction: the inline copy goes (the blob store has it, or the message is dropped). */
export async function dropInlineRaw(trx: Knex, messageId: string, stored: StoredRaw): Promise<void> {
  if (stored.inline) await prepared(trx, 'pw_received_raw_delete', DELETE_SQL, [messageId]);
}
