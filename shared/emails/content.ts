// The content of a send: custom headers, tags, attachments and the text part. Pure checks; each refusal is a
// 422 naming the field, so nothing half-formed is ever stored.
import { ServiceError } from '../errors.ts';

export interface AttachmentInput {
  content?: string | { type: 'Buffer'; data: number[] } | null;
  filename?: string | false | null;
  path?: string | null;
  content_type?: string | null;
  content_id?: string | null;
}

export interface DecodedAttachment {
  filename: string | null;
  content_type: string;
  content_id: string | null;
  content_disposition: 'attachment' | 'inline';
  content: Buffer;
}

export const MAX_MESSAGE_BYTES = 40 * 1024 * 1024;

function invalid(path: string, message: string, name: 'validation_error' | 'invalid_attachment' = 'validation_error'): ServiceError {
  return new ServiceError(name, message, { status: 422, errors: [{ path, message }] });
}

// Headers the platform writes itself; a custom value would break threading, signing or the envelope.
const RESERVED_HEADERS = new Set(['from', 'to', 'cc', 'bcc', 'subject', 'date', 'message-id', 'sender', 'reply-to', 'return-path',
  'dkim-signature', 'content-type', 'content-transfer-encoding', 'mime-version', 'received', 'arc-seal', 'arc-message-signature',
  'arc-authentication-results', 'authentication-results']);
const FIELD_NAME = /^[!-9;-~]{1,76}$/; // RFC 5322 §3.6.8: printable ASCII except ':'

export function checkHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!FIELD_NAME.test(name)) throw invalid(`headers.${name}`, `\`${name}\` is not a valid header name.`);
    if (RESERVED_HEADERS.has(name.toLowerCase())) throw invalid(`headers.${name}`, `The \`${name}\` header is set by the platform and cannot be given.`);
    if (typeof value !== 'string' || /[\r\n\0]/.test(value)) throw invalid(`headers.${name}`, `The \`${name}\` header value must be one line of text.`);
    if (value.length > 2000) throw invalid(`headers.${name}`, `The \`${name}\` header value is longer than 2000 characters.`);
    out[name] = value;
  }
  return out;
}

const TAG = /^[A-Za-z0-9_-]{1,256}$/;

export function checkTags(tags: { name: string; value: string }[]): { name: string; value: string }[] {
  if (tags.length > 75) throw invalid('tags', 'At most 75 tags.');
  tags.forEach((t, i) => {
    if (!TAG.test(t.name)) throw invalid(`tags.${i}.name`, 'A tag name holds 1-256 ASCII letters, digits, `_` or `-`.');
    if (!TAG.test(t.value)) throw invalid(`tags.${i}.value`, 'A tag value holds 1-256 ASCII letters, digits, `_` or `-`.');
  });
  return tags;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const TYPES: Record<string, string> = {
  pdf: 'application/pdf', png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', svg: 'image/svg+xml',
  txt: 'text/plain', csv: 'text/csv', html: 'text/html', htm: 'text/html', ics: 'text/calendar', json: 'application/json', xml: 'application/xml',
  zip: 'application/zip', gz: 'application/gzip', doc: 'application/msword', docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel', xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', eml: 'message/rfc822',
};

/** Decodes `content` (base64 or a serialised Node Buffer). `path` attachments are fetched by fetchAttachment. */
export function decodeAttachment(a: AttachmentInput, i: number, fetched?: Buffer): DecodedAttachment {
  let content: Buffer;
  if (fetched) content = fetched;
  else if (typeof a.content === 'string') {
    const clean = a.content.replace(/\s+/g, '');
    if (clean.length % 4 === 1 || !BASE64.test(clean)) throw invalid(`attachments.${i}.content`, 'Attachment content must be base64.', 'invalid_attachment');
    content = Buffer.from(clean, 'base64');
  } else if (a.content && typeof a.content === 'object' && a.content.type === 'Buffer' && Array.isArray(a.content.data)) {
    if (!a.content.data.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) throw invalid(`attachments.${i}.content`, 'A Buffer holds bytes 0-255.', 'invalid_attachment');
    content = Buffer.from(a.content.data);
  } else {
    throw invalid(`attachments.${i}`, 'An attachment needs `content` or `path`.', 'invalid_attachment');
  }
  const filename = typeof a.filename === 'string' && a.filename !== '' ? a.filename : null;
  if (filename && (/[\r\n\0/\\]/.test(filename) || filename.length > 255)) throw invalid(`attachments.${i}.filename`, 'A filename is one line, without slashes, at most 255 characters.', 'invalid_attachment');
  const ext = filename?.split('.').pop()?.toLowerCase() ?? '';
  const contentType = a.content_type ?? TYPES[ext] ?? 'application/octet-stream';
  if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i.test(contentType)) throw invalid(`attachments.${i}.content_type`, 'Not a media type.', 'invalid_attachment');
  const contentId = a.content_id ?? null;
  if (contentId !== null && (/[\r\n\0<>\s]/.test(contentId) || contentId.length > 250)) throw invalid(`attachments.${i}.content_id`, 'A content id has no spaces, line breaks or angle brackets.', 'invalid_attachment');
  return { filename, content_type: contentType.toLowerCase(), content_id: contentId, content_disposition: contentId ? 'inline' : 'attachment', content };
}

/** A readable text part from HTML for clients that show no HTML. */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style|head)[^>]*>[\s\S]*?<\/\1>/gi, '')
    .replace(/<a\s[^>]*href=["']([^"']+)["'][^>]*>([\s\S]*?)<\/a>/gi, (_, href: string, label: string) => `${label.replace(/<[^>]+>/g, '').trim()} (${href})`)
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|h[1-6]|li|tr|table|blockquote)>/gi, '\n\n')
    .replace(/<li[^>]*>/gi, '- ')
    .replace(/<[^>]+>/g, '')
    .replace(/&nbsp;/g, ' ').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&')
    .replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
}

/** Does the message carry a way to unsubscribe (a link in the HTML or text, or a List-Unsubscribe header)? */
export function hasUnsubscribe(html: string | null, text: string | null, headers: Record<string, string>): boolean {
  if (Object.keys(headers).some((h) => h.toLowerCase() === 'list-unsubscribe')) return true;
  return /unsubscribe|abmelden|d[ée]sinscri|darse de baja/i.test(`${html ?? ''}\n${text ?? ''}`);
}
