// Reading a stored message into the received email's fields. Pure: bytes in, fields out; throws only when
// mailparser cannot read the MIME at all (the job then records parse_failed and keeps the raw).
import { simpleParser, type AddressObject } from 'mailparser';

export interface ParsedAttachment {
  filename: string | null;
  contentType: string;
  contentDisposition: 'attachment' | 'inline';
  contentId: string | null;
  content: Buffer;
}

export interface ParsedEmail {
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string[];
  subject: string;
  messageId: string;
  html: string | null;
  text: string | null;
  headers: [string, string][];
  attachments: ParsedAttachment[];
}

/** PostgreSQL text cannot hold NUL and jsonb refuses lone surrogates: hostile mail carries both. */
export function clean(value: string): string {
  return value.replaceAll('\u0000', '').replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

const mailbox = (m: { name: string; address?: string }) =>
  clean(m.address ? (m.name ? `${m.name.replace(/[<>"\r\n]/g, '')} <${m.address}>` : m.address) : m.name);

const addresses = (a: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(a) ? a : a ? [a] : []).flatMap((o) => o.value).filter((v) => v.address || v.name).map(mailbox);

/** The header block in order, unfolded (RFC 5322 §2.2.3), values as written (encoded words not decoded). */
function headerPairs(lines: readonly { key: string; line: string }[]): [string, string][] {
  return lines.map(({ line }) => {
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/\r?\n(?=[ \t])/g, '').trim();
    return [clean(name.trim()), clean(value)];
  });
}

export async function parseMessage(raw: Buffer): Promise<ParsedEmail> {
  const parsed = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true });
  return {
    from: addresses(parsed.from)[0] ?? '',
    to: addresses(parsed.to),
    cc: addresses(parsed.cc),
    bcc: addresses(parsed.bcc),
    replyTo: addresses(parsed.replyTo),
    subject: clean(parsed.subject ?? ''),
    messageId: clean(parsed.messageId ?? ''),
    html: typeof parsed.html === 'string' ? clean(parsed.html) : null,
    text: typeof parsed.text === 'string' ? clean(parsed.text) : null,
    headers: headerPairs(parsed.headerLines ?? []),
    attachments: parsed.attachments.map((a) => ({
      filename: a.filename ? clean(a.filename) : null,
      contentType: clean(a.contentType || 'application/octet-stream'),
      contentDisposition: a.contentDisposition === 'inline' ? 'inline' : 'attachment',
      contentId: a.contentId ? clean(a.contentId.replace(/^<|>$/g, '')) : null,
      content: a.content,
    })),
  };
}
