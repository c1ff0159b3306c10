// Received mail (spec, "### Receiving"): list and search, retrieve, delete, attachments with fresh signed links,
// and the two public downloads behind those links. Received ids are their own id space: these routes never find
// a sent email, and the `/emails/{email_id}` routes never find a received one.
import { z } from 'zod';
import { notFound } from '../../shared/errors.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { linkKey, liveLinkExpiry, serveSignedDownload } from '../../shared/links/signed.ts';
import * as query from '../../shared/receiving/query.ts';
import * as present from '../../shared/receiving/present.ts';
import { deleteReceived } from '../../shared/receiving/delete.ts';
import { rawKept, readRaw } from '../../shared/receiving/raw.ts';
import { inlineCidImages } from '../../shared/cid-images.ts';
import { defineOperation } from './operation.ts';
import { attachmentFields, deleted, mailSearch, pathId, timestamp } from './schemas.ts';

const receivedAttachmentFields = attachmentFields(
  'Only when the part carried a Content-ID: resolve `cid:` references in the HTML against it',
);
const attachmentInMessage = z.object(receivedAttachmentFields).meta({ id: 'ReceivedEmailAttachmentInfo' });
const linkFields = {
  download_url: z
    .url()
    .optional()
    .describe(
      'Signed link to the file, valid 15 minutes, for this attachment only; no Authorization header needed. Absent for a part refused storage',
    ),
  expires_at: timestamp.optional().describe('When `download_url` stops working'),
};
const attachmentItem = z.object({ ...receivedAttachmentFields, ...linkFields }).meta({ id: 'ReceivedEmailAttachment' });
const attachment = z
  .object({ object: z.literal('attachment'), ...receivedAttachmentFields, ...linkFields })
  .meta({ id: 'ReceivedEmailAttachmentDetail' });

const listItemFields = {
  id: z.uuid(),
  to: z.array(z.string()).describe('As the sender wrote them'),
  from: z.string(),
  subject: z.string().describe('Empty when the message has no Subject'),
  message_id: z.string().describe('Empty when the message has no Message-ID'),
  bcc: z.array(z.string()),
  cc: z.array(z.string()),
  reply_to: z.array(z.string()),
  dropped_reason: z.enum(query.droppedReasons).nullable(),
  created_at: timestamp.describe('When the message was received'),
  attachments: z.array(attachmentInMessage),
};
const listItem = z.object(listItemFields).meta({ id: 'ReceivedEmailListItem' });
const receivedEmail = z
  .object({
    object: z.literal('email'),
    ...listItemFields,
    received_for: z
      .array(z.string())
      .describe("The team's addresses the message was accepted for (the envelope recipients)"),
    html: z.string().nullable(),
    text: z.string().nullable(),
    headers: z
      .record(z.string(), z.string())
      .describe(
        "Header name (lower case) to value as written (unfolded, not decoded); a repeated field's values in order, joined by a newline",
      ),
    raw: z
      .object({ download_url: z.url(), expires_at: timestamp })
      .nullable()
      .describe('A signed link to the raw message (`raw.eml`), valid 15 minutes; null when the source is not kept'),
  })
  .meta({ id: 'ReceivedEmail' });

const dateBound = z.union([z.iso.datetime({ offset: true }), z.iso.date()]);
const listParams = listQuery.safeExtend({
  search: mailSearch,
  start_date: dateBound
    .optional()
    .describe('ISO 8601 date or instant, inclusive (a date alone: from the start of that UTC day)'),
  end_date: dateBound
    .optional()
    .describe('ISO 8601 date or instant, inclusive (a date alone: through the end of that UTC day)'),
});

const emailParams = z.object({ email_id: pathId('received email') });
const attachmentParams = emailParams.extend({ attachment_id: pathId('attachment') });
// The query of a signed link: `.catch` sends a missing, repeated or malformed value on as '' to be refused like any bad
// link.
const linkQuery = z.object({
  expires: z
    .string()
    .regex(/^[0-9]{1,12}$/)
    .catch('')
    .describe('Unix seconds, as in `download_url`'),
  token: z.string().catch('').describe('The signature, as in `download_url`'),
});

const base = { tag: 'receiving', permission: 'full_access' } as const;
const download = {
  tag: 'receiving',
  permission: 'none',
  scope: null,
  raw: true,
  response: z.string().optional().describe('The file, served as a download'),
} as const;

export const receivingOperations = [
  defineOperation({
    ...base,
    operationId: 'listReceivedEmails',
    method: 'get',
    path: '/emails/receiving',
    summary: 'List received emails',
    description:
      'List received emails, newest first, optionally searched and limited to a date window (both ends inclusive); cursors are received-email ids.',
    scope: 'receiving:read',
    query: listParams,
    response: listEnvelope(listItem),
    handler: async ({ auth, query: q, deps }) => {
      const page = await query.listReceived(deps.db, auth.team.id, q);
      const attachments = await query.attachmentsOf(
        deps.db,
        page.rows.map((r) => r.id),
      );
      return toList(page, (row) => present.presentListItem(row, attachments.get(row.id) ?? []));
    },
  }),
  defineOperation({
    ...base,
    operationId: 'getReceivedEmail',
    method: 'get',
    path: '/emails/receiving/{email_id}',
    summary: 'Retrieve a received email',
    description:
      'Retrieve a received email: addresses, html, text, headers and attachments; the raw source is a signed link (`raw`).',
    scope: 'receiving:read',
    params: emailParams,
    query: z.object({
      html_format: z
        .enum(['cid', 'data_uri'])
        .default('cid')
        .describe(
          "`cid` (default): the HTML as received, its inline images as `cid:` references to resolve against the attachments' `content_id`. `data_uri`: those images (image types only, up to 10 MB in all) inlined as `data:` URIs",
        ),
    }),
    response: receivedEmail,
    handler: async ({ auth, params, query: q, deps }) => {
      const row = await query.getReceived(deps.db, auth.team.id, params.email_id);
      const attachments = (await query.attachmentsOf(deps.db, [row.id])).get(row.id) ?? [];
      const kept = await rawKept(deps.db, deps.blobs, row);
      const email = present.presentReceived(row, attachments, present.rawLink(deps.config, row, kept, new Date()));
      if (q.html_format === 'cid' || email.html === null) return email;
      return { ...email, html: await inlineCidImages(email.html, attachments, deps.blobs) };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'deleteReceivedEmail',
    method: 'delete',
    path: '/emails/receiving/{email_id}',
    summary: 'Delete a received email',
    description:
      "Delete a received email for good: its record, attachments and raw source; the bytes return to the team's inbox storage allowance.",
    scope: 'receiving:write',
    params: emailParams,
    response: deleted('email'),
    handler: async ({ auth, params, deps }) => {
      const done = await deleteReceived(deps.db, deps.blobs, auth.team.id, params.email_id);
      if (!done) throw notFound('Received email');
      for (const f of done.failed)
        deps.log.warn({ err: f.error, blobKey: f.key, emailId: done.id }, 'receiving.blob_delete_failed');
      return { object: 'email' as const, id: done.id, deleted: true as const };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'listReceivedEmailAttachments',
    method: 'get',
    path: '/emails/receiving/{email_id}/attachments',
    summary: 'List the attachments of a received email',
    description:
      "List a received email's attachments in the order the parts appeared, each with a fresh signed `download_url` (15 minutes); cursors are attachment ids.",
    scope: 'receiving:read',
    params: emailParams,
    query: listQuery,
    response: listEnvelope(attachmentItem),
    handler: async ({ auth, params, query: q, deps }) => {
      await query.getReceived(deps.db, auth.team.id, params.email_id);
      const page = await query.pageAttachments(deps.db, auth.team.id, params.email_id, q);
      const stored = await present.storedFlags(deps.blobs, page.rows);
      const now = new Date();
      return {
        object: 'list' as const,
        has_more: page.has_more,
        data: page.rows.map((r, i) => present.presentLinkedAttachment(deps.config, r, stored[i], now)),
      };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'getReceivedEmailAttachment',
    method: 'get',
    path: '/emails/receiving/{email_id}/attachments/{attachment_id}',
    summary: 'Retrieve an attachment of a received email',
    description: 'Retrieve one attachment of a received email with a fresh signed `download_url` (15 minutes).',
    scope: 'receiving:read',
    params: attachmentParams,
    response: attachment,
    handler: async ({ auth, params, deps }) => {
      const row = await query.getAttachment(deps.db, auth.team.id, params.email_id, params.attachment_id);
      const [stored] = await present.storedFlags(deps.blobs, [row]);
      return {
        object: 'attachment' as const,
        ...present.presentLinkedAttachment(deps.config, row, stored, new Date()),
      };
    },
  }),
  defineOperation({
    ...download,
    operationId: 'downloadReceivedEmailAttachment',
    method: 'get',
    path: '/emails/receiving/{email_id}/attachments/{attachment_id}/download',
    summary: 'Download an attachment of a received email',
    description:
      'The attachment file itself, through the signed `download_url` (no Authorization header; a User-Agent is required). Always a download; a type outside a small inert allowlist is served as application/octet-stream. Every refusal is the same 404.',
    // Plain strings: a malformed id is refused by the handler with the one 404 every refusal shares.
    params: z.object({
      email_id: z.string().describe("The received email's id, as in `download_url`"),
      attachment_id: z.string().describe("The attachment's id, as in `download_url`"),
    }),
    query: linkQuery,
    handler: async ({ params, query: q, deps, ctx }) => {
      const expires = liveLinkExpiry(q, params.email_id, params.attachment_id);
      const object = await query.attachmentForLink(deps.db, params.email_id, params.attachment_id);
      await serveSignedDownload(ctx, {
        key: linkKey(deps.config),
        kind: present.RECEIVED_ATTACHMENT_LINK,
        expires,
        token: q.token,
        blobs: deps.blobs,
        object,
      });
      return undefined;
    },
  }),
  defineOperation({
    ...download,
    operationId: 'downloadReceivedEmailRaw',
    method: 'get',
    path: '/emails/receiving/{email_id}/raw/download',
    summary: 'Download a received message',
    description:
      "The raw received message as a file named `raw.eml` (message/rfc822), through the signed link in the email's `raw` (no Authorization header; a User-Agent is required). Every refusal is the same 404.",
    params: z.object({ email_id: z.string().describe("The received email's id, as in `raw.download_url`") }),
    query: linkQuery,
    handler: async ({ params, query: q, deps, ctx }) => {
      const expires = liveLinkExpiry(q, params.email_id);
      const row = await query.rawForLink(deps.db, params.email_id);
      const object = row && {
        id: row.id,
        team_id: row.team_id,
        read: () => readRaw(deps.db, deps.blobs, row),
        filename: present.RAW_FILENAME,
        content_type: 'message/rfc822',
      };
      await serveSignedDownload(ctx, {
        key: linkKey(deps.config),
        kind: present.RECEIVED_RAW_LINK,
        expires,
        token: q.token,
        blobs: deps.blobs,
        object,
      });
      return undefined;
    },
  }),
];
