// Storing an accepted message before the 250 (ARCHITECTURE, step 2): every row and the raw bytes in one statement
// (received_raw, up to RAW_INLINE_MAX_BYTES; a larger message's bytes go durably to the blob store first, file and
// directory fsynced). Only after the commit may the MX answer 250, so a crash after the 250 loses nothing; a crash
// before it leaves at most an orphan blob, and the client retries because it never saw a 250.
//
// One row per team (per email for bounces): a message with recipients at two teams' domains becomes two
// independent copies. Each copy gets its own bytes (its received_raw row, or its blob `received/<team>/<id>.eml`)
// rather than shared ones: deleting a received email, the retention window and a team's storage allowance then act
// on that team's copy alone, with no reference counting across tenants. The cost (one more write) only falls on
// the rare message addressed to several teams.
//
// Each copy starts with our trace field (RFC 5321 §4.4: a receiving SMTP server MUST insert a Received line),
// naming the client's HELO and address, our host, the protocol (RFC 3848 ESMTP/ESMTPS), the copy's id and, when
// the copy has one recipient, `for` it. The bytes after it are the client's, unchanged.
import type { Knex } from 'knex';
import type { BlobStore } from '../../shared/blobs.ts';
import { newId } from '../../shared/ids.ts';
import { prepared } from '../../shared/db/prepared.ts';
import { RAW_INLINE_MAX_BYTES } from '../../shared/receiving/raw.ts';
import type { Recipient } from './recipients.ts';

export interface StoredMessageInput {
  raw: Buffer;
  envelopeFrom: string;
  recipients: { address: string; recipient: Recipient }[];
  remoteIp: string;
  helo: string;
  tls: boolean;
  /** Our host name, the `by` of the Received field. */
  byHost: string;
}

/** Only printable ASCII without parentheses or angle brackets survives from what the client said. */
const clean = (text: string) => text.replace(/[^\x21-\x7e]|[()<>\\]/g, '').slice(0, 255);

/** RFC 5322 date-time in UTC: `Sun, 22 Nov 2026 07:20:00 +0000`. */
function rfc5322Date(d: Date): string {
  return d.toUTCString().replace('GMT', '+0000');
}

export function receivedField(
  input: Pick<StoredMessageInput, 'helo' | 'remoteIp' | 'tls' | 'byHost'>,
  id: string,
  rcpt: string[],
  at: Date,
): string {
  const from = `from ${clean(input.helo) || 'unknown'} ([${clean(input.remoteIp)}])`;
  const forClause = rcpt.length === 1 ? `\r\n\tfor <${clean(rcpt[0])}>` : '';
  return `Received: ${from}\r\n\tby ${input.byHost} with ${input.tls ? 'ESMTPS' : 'ESMTP'} id ${id}${forClause};\r\n\t${rfc5322Date(at)}\r\n`;
}

// Every copy's row in one prepared statement (shared/db/prepared.ts), however many copies: the rows go as one JSON
// array, and the bytes of each copy up to RAW_INLINE_MAX_BYTES go with them into received_raw (aligned arrays). It
// runs before every 250, where knex's building of an insert cost the MX more than running it.
const INSERT_SQL = `with stored as (
    insert into received_messages
      (id, team_id, domain_id, raw_blob_key, size, envelope_from, rcpt_to, remote_ip, helo, tls, status, kind, email_id,
       received_at)
    select id, team_id, domain_id, raw_blob_key, size, envelope_from, rcpt_to, remote_ip, helo, tls, 'stored', kind,
      email_id, received_at
    from jsonb_to_recordset($1::jsonb) as r(id uuid, team_id uuid, domain_id uuid, raw_blob_key text, size integer,
      envelope_from text, rcpt_to text[], remote_ip text, helo text, tls boolean, kind text, email_id uuid,
      received_at timestamptz)
    returning id, team_id)
  insert into received_raw (message_id, team_id, bytes)
  select stored.id, stored.team_id, inline.bytes
  from unnest($2::uuid[], $3::bytea[]) as inline(id, bytes) join stored on stored.id = inline.id`;

export async function storeReceivedMessage(db: Knex, blobs: BlobStore, input: StoredMessageInput): Promise<string[]> {
  const groups = new Map<string, { recipient: Recipient; rcpt: string[] }>();
  for (const { address, recipient } of input.recipients) {
    const key = recipient.kind === 'mail' ? `mail:${recipient.teamId}` : `bounce:${recipient.emailId}`;
    const group = groups.get(key) ?? { recipient, rcpt: [] };
    group.rcpt.push(address);
    groups.set(key, group);
  }
  const now = new Date();
  const rows = [...groups.values()].map(({ recipient, rcpt }) => {
    const id = newId();
    const raw = Buffer.concat([Buffer.from(receivedField(input, id, rcpt, now), 'latin1'), input.raw]);
    return {
      raw,
      id,
      team_id: recipient.teamId,
      domain_id: recipient.domainId,
      // Null: the bytes ride the statement (received_raw). A larger copy's file in the team's directory, not a
      // directory per message: a new one would cost a mkdir and an fsync of its parent before the 250.
      raw_blob_key: raw.length <= RAW_INLINE_MAX_BYTES ? null : `received/${recipient.teamId}/${id}.eml`,
      size: raw.length,
      envelope_from: input.envelopeFrom,
      rcpt_to: rcpt,
      remote_ip: input.remoteIp,
      helo: input.helo,
      tls: input.tls,
      kind: recipient.kind,
      email_id: recipient.kind === 'bounce' ? recipient.emailId : null,
      received_at: now,
    };
  });
  const inline = rows.filter((r) => r.raw_blob_key === null);
  await Promise.all(rows.map((r) => r.raw_blob_key !== null && blobs.put(r.raw_blob_key, r.raw)));
  // One statement for every row and inline copy: atomic and committed on its own (autocommit, the WAL flushed under
  // the default synchronous_commit) before it returns, without the BEGIN and COMMIT round trips of a transaction.
  const json = JSON.stringify(rows.map(({ raw: _raw, ...row }) => row));
  await prepared(db, 'mx_store_received_v2', INSERT_SQL, [json, inline.map((r) => r.id), inline.map((r) => r.raw)]);
  return rows.map((r) => r.id);
}
