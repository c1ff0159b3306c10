// A sent email's attachments (list, get, and the public signed download); its share links are email-share.ts.
import { z } from 'zod';
import { getEmail } from '../../shared/emails/store.ts';
import { notFound } from '../../shared/errors.ts';
import { listEnvelope, listQuery, paginateByPosition } from '../../shared/pagination.ts';
import { issueLink, linkKey, linkUrl, liveLinkExpiry, serveSignedDownload } from '../../shared/links/signed.ts';
import { defineOperation } from './operation.ts';
import { attachmentFields, pathId, timestamp } from './schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { attachmentFieldsOf, type AttachmentRow } from '../../shared/attachment-rows.ts';

/** The kind of link this file signs (email-share.ts signs another): a token of one never opens the other. */
const ATTACHMENT_LINK = 'email_attachment';

const linkedAttachmentFields = {
  ...attachmentFields('Only when the attachment is inline (`cid:` references)'),
  download_url: z
    .url()
    .describe('Signed link to the file, valid 15 minutes, for this attachment only; no Authorization header needed'),
  expires_at: timestamp.describe('When `download_url` stops working'),
};
const attachmentItem = z.object(linkedAttachmentFields).meta({ id: 'EmailAttachment' });
const attachment = z
  .object({ object: z.literal('attachment'), ...linkedAttachmentFields })
  .meta({ id: 'EmailAttachmentDetail' });

const emailParams = z.object({ email_id: pathId('sent email') });
const attachmentParams = emailParams.extend({ attachment_id: pathId('attachment') });

const downloadPath = (emailId: string, attachmentId: string) =>
  `/emails/${emailId}/attachments/${attachmentId}/download`;

function presentAttachment(deps: ApiDeps, row: AttachmentRow, now: Date) {
  const link = issueLink(linkKey(deps.config), { kind: ATTACHMENT_LINK, teamId: row.team_id, objectId: row.id }, now);
  return {
    ...attachmentFieldsOf(row),
    download_url: linkUrl(deps.config.PUBLIC_BASE_URL, downloadPath(row.email_id, row.id), link),
    expires_at: link.expires_at,
  };
}

const base = { tag: 'emails', permission: 'full_access' } as const;

export const emailAttachmentOperations = [
  defineOperation({
    ...base,
    operationId: 'listEmailAttachments',
    method: 'get',
    path: '/emails/{email_id}/attachments',
    summary: 'List the attachments of a sent email',
    description:
      "List a sent email's attachments in the order of its parts, each with a fresh signed `download_url` (15 minutes); cursors are attachment ids.",
    scope: 'emails:read',
    params: emailParams,
    query: listQuery,
    response: listEnvelope(attachmentItem),
    handler: async ({ auth, params, query, deps }) => {
      await getEmail(deps.db, auth.team.id, params.email_id);
      const now = new Date();
      const page = await paginateByPosition<AttachmentRow>(
        deps.db('email_attachments').where({ email_id: params.email_id }),
        query,
        'an attachment of this email',
      );
      return {
        object: 'list' as const,
        has_more: page.has_more,
        data: page.rows.map((r) => presentAttachment(deps, r, now)),
      };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'getEmailAttachment',
    method: 'get',
    path: '/emails/{email_id}/attachments/{attachment_id}',
    summary: 'Retrieve an attachment of a sent email',
    description: 'Retrieve one attachment of a sent email with a fresh signed `download_url` (15 minutes).',
    scope: 'emails:read',
    params: attachmentParams,
    response: attachment,
    handler: async ({ auth, params, deps }) => {
      await getEmail(deps.db, auth.team.id, params.email_id);
      const row = await deps
        .db<AttachmentRow>('email_attachments')
        .where({ id: params.attachment_id, email_id: params.email_id, team_id: auth.team.id })
        .first();
      if (!row) throw notFound('Attachment');
      return { object: 'attachment' as const, ...presentAttachment(deps, row, new Date()) };
    },
  }),
  defineOperation({
    operationId: 'downloadEmailAttachment',
    method: 'get',
    path: '/emails/{email_id}/attachments/{attachment_id}/download',
    tag: 'emails',
    summary: 'Download an attachment of a sent email',
    description:
      'The attachment file itself, through the signed `download_url` (no Authorization header; a User-Agent is required). Always a download; a type outside a small inert allowlist is served as application/octet-stream. Every refusal is the same 404.',
    permission: 'none',
    scope: null,
    // Plain strings: a malformed id or query is refused by the handler with the one 404 every refusal shares.
    params: z.object({
      email_id: z.string().describe("The sent email's id, as in `download_url`"),
      attachment_id: z.string().describe("The attachment's id, as in `download_url`"),
    }),
    query: z.object({
      // `.catch`: a missing, repeated or malformed value reaches the handler as '' and is refused like any bad link.
      expires: z
        .string()
        .regex(/^[0-9]{1,12}$/)
        .catch('')
        .describe('Unix seconds, as in `download_url`'),
      token: z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,1024}$/)
        .catch('')
        .describe('The signature, as in `download_url`'),
    }),
    response: z.string().optional().describe('The file, served as a download'),
    raw: true,
    handler: async ({ params, query, deps, ctx }) => {
      const expires = liveLinkExpiry(query, params.email_id, params.attachment_id);
      const object = await deps
        .db<AttachmentRow>('email_attachments')
        .where({ id: params.attachment_id, email_id: params.email_id })
        .first();
      await serveSignedDownload(ctx, {
        key: linkKey(deps.config),
        kind: ATTACHMENT_LINK,
        expires,
        token: query.token,
        blobs: deps.blobs,
        object,
      });
      return undefined;
    },
  }),
];
