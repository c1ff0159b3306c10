// A stored attachment, sent (email_attachments) or received (received_attachments): the two tables share these
// columns, and the API shows them the same way.

export interface AttachmentRow {
  id: string;
  email_id: string;
  team_id: string;
  position: number;
  filename: string | null;
  content_type: string;
  content_disposition: 'attachment' | 'inline';
  content_id: string | null;
  size: number;
  blob_key: string;
}

/** The fields every attachment answer carries; `content_id` only when the part has one. */
export function attachmentFieldsOf(row: AttachmentRow) {
  return {
    id: row.id,
    filename: row.filename,
    content_type: row.content_type,
    content_disposition: row.content_disposition,
    size: row.size,
    ...(row.content_id ? { content_id: row.content_id } : {}),
  };
}
