// Where an accepted message's bytes are (migration 20261129060100): up to RAW_INLINE_MAX_BYTES in received_raw,
// written by the MX's one statement before the 250 (received_messages.raw_blob_key null); a larger one in the blob
// store, written durably before that statement (raw_blob_key names it). Every reader goes through here: the receive
// job and the bounce reader, the API's raw link and its download. A received message is deleted with its row
// (received_raw goes by its foreign key's cascade; a blob after the commit, shared/receiving/delete.ts).
import type { Knex } from 'knex';
import type { BlobStore } from '../blobs.ts';
import { prepared } from '../db/prepared.ts';
import { RAW_INLINE_MAX_BYTES } from '../emails/persist.ts';

export { RAW_INLINE_MAX_BYTES };

/** A message row's pointer to its bytes: a blob key, or null when they are in received_raw. */
export interface RawRef {
  id: string;
  raw_blob_key: string | null;
}

const READ_SQL = 'select bytes from received_raw where message_id = ?';
const DELETE_SQL = 'delete from received_raw where message_id = ?';

/** The bytes of a received message, or null when they are gone. */
export async function readRaw(db: Knex, blobs: BlobStore, row: RawRef): Promise<Buffer | null> {
  if (row.raw_blob_key !== null) return blobs.get(row.raw_blob_key);
  // As text (hex): node-postgres reads every result value as a UTF-8 string first, so a binary-format bytea would
  // come back mangled (test/inbound-raw.test.ts sends 8-bit bytes through).
  const [inline] = await prepared<{ bytes: Buffer }>(db, 'pw_received_raw_read', READ_SQL, [row.id]);
  return inline?.bytes ?? null;
}

/** Whether a received message's bytes are still kept (without reading them). */
export async function rawKept(db: Knex, blobs: BlobStore, row: RawRef): Promise<boolean> {
  if (row.raw_blob_key !== null) return (await blobs.size(row.raw_blob_key)) !== null;
  return (await db('received_raw').where({ message_id: row.id }).first(db.raw('1'))) !== undefined;
}

/** A dropped message's inline bytes go in the transaction that drops it (a blob goes after its commit). */
export async function dropInlineRaw(trx: Knex, row: RawRef): Promise<void> {
  if (row.raw_blob_key === null) await prepared(trx, 'pw_received_raw_delete', DELETE_SQL, [row.id]);
}
