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

function invalid(
  path: string,
  message: string,
  name: 'validation_error' | 'invalid_attachment' = 'validation_error',
): ServiceError {
  return new ServiceError(name, message, { status: 422, errors: [{ path, message }] });
}

// Headers the platform writes itself; a custom value would break threading, signing or the envelope.
const RESERVED_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'subject',
  'date',
  'message-id',
  'sender',
  'reply-to',
  'return-path',
  'dkim-signature',
  'content-type',
  'content-transfer-encoding',
  'mime-version',
  'received',
  'arc-seal',
  'arc-message-signature',
  'arc-authentication-results',
  'authentication-results',
]);
const FIELD_NAME = /^[!-9;-~]{1,76}$/; // RFC 5322 §3.6.8: printable ASCII except ':'

/**
 * `composed`: the message is built from these fields (mta/delivery/compose.ts), so every value must fold into lines
 * of 998 octets (unfoldableRun). An SMTP submission is delivered as submitted, its lines already checked there.
 */
export function checkHeaders(
  headers: Record<string, string>,
  { composed }: { composed: boolean },
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!FIELD_NAME.test(name)) throw invalid(`headers.${name}`, `\`${name}\` is not a valid header name.`);
    if (RESERVED_HEADERS.has(name.toLowerCase()))
      throw invalid(`headers.${name}`, `The \`${name}\` header is set by the platform and cannot be given.`);
    if (typeof value !== 'string' || /[\r\n\0]/.test(value))
      throw invalid(`headers.${name}`, `The \`${name}\` header value must be one line of text.`);
    if (value.length > 2000)
      throw invalid(`headers.${name}`, `The \`${name}\` header value is longer than 2000 characters.`);
    const run = composed ? unfoldableRun(name, value) : null;
    if (run)
      throw invalid(
        `headers.${name}`,
        `The \`${name}\` header value has ${run.length} characters with no space to fold the line at; a line of mail holds at most ${MAX_LINE} (RFC 5322 §2.1.1), so at most ${run.limit} here.`,
      );
    out[name] = value;
  }
  return out;
}

export const MAX_LINE = 998; // RFC 5322 §2.1.1, without the CRLF

// Fields nodemailer writes as given, never as RFC 2047 encoded-words, whatever they hold (so even non-ASCII stays
// on the line, in UTF-8 octets), with the octets it adds: the angle brackets around a msg-id.
const UNENCODED: Record<string, number> = {
  'in-reply-to': 2,
  references: 2,
  'content-id': 2,
  'otp-token': 0,
  'content-disposition': 0,
};

/**
 * A run of a header value too long for one line once folded, or null. nodemailer folds a field only at whitespace
 * (mime-funcs foldLines), so a word (with the whitespace before it) is one line: the first shares it with `Name: `,
 * a later one begins a continuation line. Every run is held to the first's bound, 998 - (name + 2): one number,
 * whatever the folder does. A value with anything but printable ASCII and tabs goes out as encoded-words (RFC 2047),
 * which nodemailer splits into short lines, so only a plain value (or a field of UNENCODED) can run over.
 */
export function unfoldableRun(name: string, value: string): { length: number; limit: number } | null {
  const extra = UNENCODED[name.toLowerCase()];
  if (extra === undefined && !/^[\t\x20-\x7e]*$/.test(value)) return null;
  const limit = MAX_LINE - name.length - 2 - (extra ?? 0);
  if (Buffer.byteLength(value) <= limit) return null;
  for (const [run] of value.matchAll(/[ \t]*[^ \t]+/g)) {
    const length = Buffer.byteLength(run);
    if (length > limit) return { length, limit };
  }
  return null;
}

const TAG = /^[A-Za-z0-9_-]{1,256}$/;

export function checkTags(tags: { name: string; value: string }[]): { name: string; value: string }[] {
  if (tags.length > 75) throw invalid('tags', 'At most 75 tags.');
  tags.forEach((t, i) => {
    if (!TAG.test(t.name)) throw invalid(`tags.${i}.name`, 'A tag name holds 1-256 ASCII letters, digits, `_` or `-`.');
    if (!TAG.test(t.value))
      throw invalid(`tags.${i}.value`, 'A tag value holds 1-256 ASCII letters, digits, `_` or `-`.');
  });
  return tags;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  txt: 'text/plain',
  csv: 'text/csv',
  html: 'text/html',
  htm: 'text/html',
  ics: 'text/calendar',
  json: 'application/json',
  xml: 'application/xml',
  zip: 'application/zip',
  gz: 'application/gzip',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  eml: 'message/rfc822',
};

/** Decodes `content` (base64 or a serialised Node Buffer). `path` attachments are fetched by fetchAttachment. */
export function decodeAttachment(a: AttachmentInput, i: number, fetched?: Buffer): DecodedAttachment {
  let content: Buffer;
  if (fetched) content = fetched;
  else if (typeof a.content === 'string') {
    const clean = a.content.replace(/\s+/g, '');
    if (clean.length % 4 === 1 || !BASE64.test(clean))
      throw invalid(`attachments.${i}.content`, 'Attachment content must be base64.', 'invalid_attachment');
    content = Buffer.from(clean, 'base64');
  } else if (
    a.content &&
    typeof a.content === 'object' &&
    a.content.type === 'Buffer' &&
    Array.isArray(a.content.data)
  ) {
    if (!a.content.data.every((b) => Number.isInteger(b) && b >= 0 && b <= 255))
      throw invalid(`attachments.${i}.content`, 'A Buffer holds bytes 0-255.', 'invalid_attachment');
    content = Buffer.from(a.content.data);
  } else {
    throw invalid(`attachments.${i}`, 'An attachment needs `content` or `path`.', 'invalid_attachment');
  }
  const filename = typeof a.filename === 'string' && a.filename !== '' ? a.filename : null;
  if (filename && (/[\r\n\0/\\]/.test(filename) || filename.length > 255))
    throw invalid(
      `attachments.${i}.filename`,
      'A filename is one line, without slashes, at most 255 characters.',
      'invalid_attachment',
    );
  const ext = filename?.split('.').pop()?.toLowerCase() ?? '';
  const contentType = a.content_type ?? TYPES[ext] ?? 'application/octet-stream';
  // RFC 6838 §4.2: type and subtype names are at most 127 characters each. A longer one would be a header line
  // nodemailer cannot fold (it has no whitespace).
  if (!/^[a-z0-9!#$&^_.+-]{1,127}\/[a-z0-9!#$&^_.+-]{1,127}$/i.test(contentType))
    throw invalid(
      `attachments.${i}.content_type`,
      'Not a media type (`type/subtype`, each at most 127 characters).',
      'invalid_attachment',
    );
  const contentId = a.content_id ?? null;
  if (contentId !== null && (/[\r\n\0<>\s]/.test(contentId) || contentId.length > 250))
    throw invalid(
      `attachments.${i}.content_id`,
      'A content id has no spaces, line breaks or angle brackets.',
      'invalid_attachment',
    );
  return {
    filename,
    content_type: contentType.toLowerCase(),
    content_id: contentId,
    content_disposition: contentId ? 'inline' : 'attachment',
    content,
  };
}

/** A readable text part from HTML for clients that show no HTML. */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style|head)[^>]*>[\s\S]*?<\/\1>/gi, '')
    .replace(
      /<a\s[^>]*href=["']([^"']+)["'][^>]*>([\s\S]*?)<\/a>/gi,
      (_, href: string, label: string) => `${label.replace(/<[^>]+>/g, '').trim()} (${href})`,
    )
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|h[1-6]|li|tr|table|blockquote)>/gi, '\n\n')
    .replace(/<li[^>]*>/gi, '- ')
    .replace(/<[^>]+>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

// The words of an unsubscribe link, as text, HTML (entities) or in a URL (percent-encoded). Tracking never rewrites
// a link that says them (shared/tracking/links.ts).
const SEP = '(?:\\s|&nbsp;|%20|[-_+])+';
export const UNSUBSCRIBE_WORD = new RegExp(
  `unsubscribe|abmelden|d(?:[ée]|&eacute;|&#0*233;|&#x0*e9;|%c3%a9)sinscri|darse${SEP}de${SEP}baja`,
  'i',
);
// Resend's placeholder for the recipient's unsubscribe URL (resend-api.md §1.8).
const PLACEHOLDER = '{{{RESEND_UNSUBSCRIBE_URL}}}';
const LINK_TARGET = /^(?:https?:|mailto:)/i;
// An <a> start tag or an end tag. `[^<>]` stops a failed match at the next tag, so the scan stays linear.
const ANCHOR_TAGS = /<a\s[^<>]*>|<\/a\s*>/gi;
const HREF = /\shref\s*=\s*/i;
const TEXT_URL = /(?:https?:\/\/|mailto:)[^\s<>"]/i;

/** The href of an <a> start tag (its first, as browsers take it), or null. */
function hrefOf(tag: string): string | null {
  const m = HREF.exec(tag);
  if (!m) return null;
  const at = m.index + m[0].length;
  const quote = tag[at];
  if (quote === '"' || quote === "'") {
    const end = tag.indexOf(quote, at + 1);
    return end < 0 ? null : tag.slice(at + 1, end).trim();
  }
  return /^[^\s>]*/.exec(tag.slice(at))![0];
}

/** An <a> with an http(s) or mailto href (or Resend's placeholder) whose href or text says unsubscribe. */
function htmlHasLink(html: string): boolean {
  if (!UNSUBSCRIBE_WORD.test(html) && !html.includes(PLACEHOLDER)) return false;
  // Where the text of the open link (one with an http(s) or mailto href) starts. Each text is read once.
  let textFrom: number | null = null;
  const linkSays = (end: number) => textFrom !== null && UNSUBSCRIBE_WORD.test(html.slice(textFrom, end));
  for (const m of html.matchAll(ANCHOR_TAGS)) {
    // An end tag, or a start tag, which ends the open link as well (an <a> cannot nest).
    if (linkSays(m.index)) return true;
    textFrom = null;
    const href = m[0][1] === '/' ? null : hrefOf(m[0]);
    if (href === PLACEHOLDER) return true;
    if (href === null || !LINK_TARGET.test(href)) continue;
    if (UNSUBSCRIBE_WORD.test(href)) return true;
    textFrom = m.index + m[0].length;
  }
  return linkSays(html.length);
}

/** A line of the text part holding both an unsubscribe word and an http(s) or mailto URL, or Resend's placeholder. */
function textHasLink(text: string): boolean {
  if (text.includes(PLACEHOLDER)) return true;
  if (!UNSUBSCRIBE_WORD.test(text)) return false;
  return text.split('\n').some((line) => UNSUBSCRIBE_WORD.test(line) && TEXT_URL.test(line));
}

/**
 * Does the message carry a way to unsubscribe: a List-Unsubscribe header, or a link, not merely the word ("reply
 * STOP to unsubscribe" is no link)? In `html`, an <a> with an http(s) or mailto href whose href or text holds an
 * unsubscribe word; in `text`, an http(s) or mailto URL on a line holding one. Resend's `{{{RESEND_UNSUBSCRIBE_URL}}}`
 * counts as an href or anywhere in the text. It runs on every send: a few linear regex passes, no HTML parser, and
 * nothing past the first pass for a message that never says the word.
 */
export function hasUnsubscribe(html: string | null, text: string | null, headers: Record<string, string>): boolean {
  if (Object.keys(headers).some((h) => h.toLowerCase() === 'list-unsubscribe')) return true;
  return (html !== null && htmlHasLink(html)) || (text !== null && textHasLink(text));
}
