// Accepted emails for the MTA's tests, written as the accept path writes them (shared/emails/persist.ts):
// status queued, last_event sent with its email.sent event, every recipient queued and due now, attachments as
// blobs, and for an SMTP-submitted email its raw message in email_raw (up to RAW_INLINE_MAX_BYTES, or when asked
// for) or as a blob named by raw_blob_key.
import type { Knex } from 'knex';
import type { BlobStore } from '../../shared/blobs.ts';
import { newId } from '../../shared/ids.ts';
import { eventRow, insertEvents } from '../../shared/events.ts';
import { emailEventData, type EmailRow } from '../../shared/emails/present.ts';
import { RAW_INLINE_MAX_BYTES } from '../../shared/emails/persist.ts';

export interface TestEmail {
  teamId: string;
  domain: { id: string; name: string } | null;
  from?: string;
  to: string[];
  cc?: string[];
  bcc?: string[];
  subject?: string;
  html?: string | null;
  text?: string | null;
  headers?: Record<string, string>;
  tags?: { name: string; value: string }[];
  topicId?: string | null;
  source?: 'api' | 'smtp' | 'broadcast';
  /** An SMTP-submitted message, sent as it is. */
  raw?: Buffer;
  /** Keep `raw` in the blob store, as the accept path does past RAW_INLINE_MAX_BYTES. */
  rawInBlobStore?: boolean;
  attachments?: { filename: string; content: Buffer; contentType: string; contentId?: string }[];
  now?: Date;
}

const domainOf = (address: string) => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

export async function insertEmail(db: Knex, blobs: BlobStore, input: TestEmail): Promise<string> {
  const id = newId();
  const now = input.now ?? new Date();
  const from = input.from ?? `Sender <hello@${input.domain?.name ?? 'example.com'}>`;
  const fromAddress = /<([^>]+)>/.exec(from)?.[1] ?? from;
  let rawKey: string | null = null;
  const inline = input.raw && !input.rawInBlobStore && input.raw.length <= RAW_INLINE_MAX_BYTES;
  if (input.raw && !inline) {
    rawKey = `emails/${input.teamId}/${id}/submitted.eml`;
    await blobs.put(rawKey, input.raw);
  }
  await db.transaction(async (trx) => {
    await trx('emails').insert({
      id,
      team_id: input.teamId,
      domain_id: input.domain?.id ?? null,
      source: input.source ?? (input.raw ? 'smtp' : 'api'),
      from,
      from_address: fromAddress,
      to: input.to,
      cc: input.cc ?? [],
      bcc: input.bcc ?? [],
      reply_to: [],
      subject: input.subject ?? 'Hello',
      html: input.html === undefined ? '<p>Hello there</p>' : input.html,
      text: input.text === undefined ? 'Hello there' : input.text,
      headers: JSON.stringify(input.headers ?? {}),
      tags: JSON.stringify(input.tags ?? []),
      topic_id: input.topicId ?? null,
      message_id: `<${id}@${input.domain?.name ?? 'example.com'}>`,
      status: 'queued',
      last_event: 'sent',
      raw_blob_key: rawKey,
      size_bytes: input.raw?.length ?? 0,
      created_at: now,
      updated_at: now,
    });
    if (inline) await trx('email_raw').insert({ email_id: id, team_id: input.teamId, bytes: input.raw });
    const all = [
      ...input.to.map((a) => [a, 'to']),
      ...(input.cc ?? []).map((a) => [a, 'cc']),
      ...(input.bcc ?? []).map((a) => [a, 'bcc']),
    ];
    await trx('email_recipients').insert(
      all.map(([address, kind]) => ({
        id: newId(),
        email_id: id,
        team_id: input.teamId,
        address,
        domain: domainOf(address),
        kind,
        status: 'queued',
        next_attempt_at: now,
        updated_at: now,
      })),
    );
    for (const [position, a] of (input.attachments ?? []).entries()) {
      const blobKey = `emails/${input.teamId}/${id}/attachment-${position}`;
      await blobs.put(blobKey, a.content);
      await trx('email_attachments').insert({
        id: newId(),
        email_id: id,
        team_id: input.teamId,
        position,
        filename: a.filename,
        content_type: a.contentType,
        content_id: a.contentId ?? null,
        content_disposition: a.contentId ? 'inline' : 'attachment',
        size: a.content.length,
        blob_key: blobKey,
      });
    }
    const row: EmailRow = await trx('emails').where({ id }).first();
    await insertEvents(trx, [eventRow(input.teamId, 'email.sent', emailEventData(row))]);
  });
  return id;
}

export interface RecipientRow {
  address: string;
  status: string;
  attempts: number;
  next_attempt_at: Date | null;
  first_deferred_at: Date | null;
  delay_notified: boolean;
  leased_until: Date | null;
  last_response: string | null;
  enhanced_code: string | null;
  bounce_type: string | null;
  bounce_sub_type: string | null;
  mx_host: string | null;
}

export async function recipientsOf(db: Knex, emailId: string): Promise<Map<string, RecipientRow>> {
  const rows: RecipientRow[] = await db('email_recipients').where({ email_id: emailId });
  return new Map(rows.map((r) => [r.address, r]));
}

export async function eventsOf(db: Knex, emailId: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
  return db('events').whereRaw(`data->>'email_id' = ?`, [emailId]).orderBy('id').select('type', 'data');
}

/** The submitted message an email keeps (email_raw, or the blob store for a large one); null for none. */
export async function storedMessage(db: Knex, blobs: BlobStore, emailId: string): Promise<Buffer | null> {
  const row: { bytes: Buffer | null; raw_blob_key: string | null } | undefined = await db('emails')
    .leftJoin('email_raw', 'email_raw.email_id', 'emails.id')
    .where('emails.id', emailId)
    .first('email_raw.bytes', 'emails.raw_blob_key');
  if (row?.bytes) return row.bytes;
  return row?.raw_blob_key ? blobs.get(row.raw_blob_key) : null;
}
