// The columns of an `emails` row that a send writes (email-statement.ts) and a deliver job reads back
// (mta/delivery/lease.ts): one list, so a column added to the one is never missing from the other.
export const EMAIL_COLUMNS = [
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
  'template_id',
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

export type EmailColumn = (typeof EMAIL_COLUMNS)[number];
