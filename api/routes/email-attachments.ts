// A sent email's attachments (list, get, and the public signed download) and its share links.
import { z } from 'zod';
import { getEmail } from '../../shared/emails/store.ts';
import { presentEmail } from '../../shared/emails/present.ts';
import { notFound, ServiceError } from '../../shared/errors.ts';
import { listEnvelope, listQuery, paginateByPosition } from '../../shared/pagination.ts';
import {
  issueLink,
  linkKey,
  linkRefused,
  linkUrl,
  liveLinkExpiry,
  nowSeconds,
  openLink,
  sealLink,
  serveSignedDownload,
} from '../../shared/links/signed.ts';
import { defineOperation } from './operation.ts';
import { attachmentFields, pathId, timestamp } from './schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { attachmentFieldsOf, type AttachmentRow } from '../../shared/attachment-rows.ts';

/** The kinds of link this file signs: a token of one never opens the other. */
const ATTACHMENT_LINK = 'email_attachment';
const SHARE_LINK = 'email_share';

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

// Share links: `expires_in` is `<n> <unit>` or `<n><unit>` (`10m`, `2h`, `1 day`), 1 minute to 30 days.
const SHARE_DEFAULT_SECONDS = 48 * 3600;
const SHARE_MIN_SECONDS = 60;
const SHARE_MAX_SECONDS = 30 * 86_400;
const SHARE_UNITS: Record<string, number> = {
  s: 1,
  sec: 1,
  secs: 1,
  second: 1,
  seconds: 1,
  m: 60,
  min: 60,
  mins: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hr: 3600,
  hrs: 3600,
  hour: 3600,
  hours: 3600,
  d: 86_400,
  day: 86_400,
  days: 86_400,
  w: 604_800,
  week: 604_800,
  weeks: 604_800,
};

export function parseExpiresIn(text: string): number {
  const m = /^(\d{1,7})\s*([a-z]+)$/.exec(text.trim().toLowerCase());
  const unit = m ? SHARE_UNITS[m[2]] : undefined;
  const problem = (message: string) =>
    new ServiceError('validation_error', `Invalid \`expires_in\`: ${message}.`, {
      errors: [{ path: 'expires_in', message }],
    });
  if (!m || !unit)
    throw problem('use `<n> <unit>` such as `10m`, `2 hours` or `1 day` (units: seconds, minutes, hours, days, weeks)');
  const seconds = Number(m[1]) * unit;
  if (seconds < SHARE_MIN_SECONDS || seconds > SHARE_MAX_SECONDS) throw problem('must be from 1 minute to 30 days');
  return seconds;
}

const shareView = z
  .object({
    object: z.literal('shared_email'),
    id: z.uuid(),
    from: z.string(),
    to: z.array(z.string()),
    subject: z.string(),
    created_at: timestamp,
    last_event: z.string(),
    text: z.string().nullable(),
    html: z.string().nullable().describe('The HTML source as a string: never served as text/html'),
    expires_at: timestamp.describe('When this share link stops working'),
  })
  .meta({ id: 'SharedEmail' });

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
  defineOperation({
    ...base,
    operationId: 'shareEmail',
    method: 'post',
    path: '/emails/{email_id}/share',
    summary: 'Share a sent email',
    description:
      'Create a read-only share link to a sent email (`expires_in`: `10m`, `2 hours`, `1 day`; 1 minute to 30 days, default 48 hours). The link is signed, not stored: it cannot be revoked before it expires.',
    scope: 'emails:write',
    params: emailParams,
    body: z.object({
      expires_in: z
        .string()
        .max(64)
        .nullish()
        .describe(
          '`<n> <unit>` (seconds, minutes, hours, days, weeks; `m`, `h`, `d` too), 1 minute to 30 days; default 48 hours',
        ),
    }),
    response: z.object({ object: z.literal('email'), id: z.uuid(), url: z.url(), expires_at: timestamp }),
    handler: async ({ auth, params, body, deps }) => {
      const seconds = body.expires_in == null ? SHARE_DEFAULT_SECONDS : parseExpiresIn(body.expires_in);
      const email = await getEmail(deps.db, auth.team.id, params.email_id);
      const expires = nowSeconds() + seconds;
      const token = sealLink(linkKey(deps.config), {
        kind: SHARE_LINK,
        teamId: auth.team.id,
        objectId: email.id,
        expires,
      });
      return {
        object: 'email' as const,
        id: email.id,
        url: `${deps.config.PUBLIC_BASE_URL}/share/${token}`,
        expires_at: new Date(expires * 1000).toISOString(),
      };
    },
  }),
  defineOperation({
    operationId: 'viewSharedEmail',
    method: 'get',
    path: '/share/{token}',
    tag: 'emails',
    summary: 'View a shared email',
    description:
      'The read-only JSON view of a shared email (no Authorization header; a User-Agent is required). The HTML is a string field, never served as a page. An expired or tampered link is the same 404.',
    permission: 'none',
    scope: null,
    params: z.object({
      token: z.string().describe('The last segment of the `url` that POST /emails/{email_id}/share answered'),
    }),
    response: shareView,
    handler: async ({ params, deps, ctx }) => {
      const claims = openLink(linkKey(deps.config), SHARE_LINK, params.token, new Date(), SHARE_MAX_SECONDS);
      if (!claims) throw linkRefused();
      const row = await deps.db('emails').where({ id: claims.objectId, team_id: claims.teamId }).first();
      if (!row) throw linkRefused();
      const e = presentEmail(row);
      // JSON only (the router serves it as application/json): whatever the HTML holds, no browser renders it here.
      ctx.set('Cache-Control', 'no-store');
      ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'; sandbox");
      ctx.set('Referrer-Policy', 'no-referrer');
      ctx.set('X-Robots-Tag', 'noindex, nofollow');
      return {
        object: 'shared_email' as const,
        id: e.id,
        from: e.from,
        to: e.to,
        subject: e.subject,
        created_at: e.created_at,
        last_event: e.last_event,
        text: e.text,
        html: e.html,
        expires_at: new Date(claims.expires * 1000).toISOString(),
      };
    },
  }),
];
