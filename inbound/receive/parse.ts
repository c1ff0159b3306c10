// Reading a stored message into the received email's fields. Pure: bytes in, fields out; throws only when
// mailparser cannot read the MIME at all (the job then records parse_failed and keeps the raw).
import { simpleParser, type AddressObject } from 'mailparser';
import { storable } from '../../shared/receiving/exact-text.ts';

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

// Header fields are kept in their storable form (a text column holds no NUL, jsonb no lone surrogate); html and
// text exactly, as decoded (shared/receiving/exact-text.ts).
const mailbox = (m: { name: string; address?: string }) =>
  storable(m.address ? (m.name ? `${m.name.replace(/[<>"\r\n]/g, '')} <${m.address}>` : m.address) : m.name);

const addresses = (a: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(a) ? a : a ? [a] : [])
    .flatMap((o) => o.value)
    .filter((v) => v.address || v.name)
    .map(mailbox);

/** The header block in order, unfolded (RFC 5322 §2.2.3), values as written (encoded words not decoded). */
function headerPairs(lines: readonly { key: string; line: string }[]): [string, string][] {
  return lines.map(({ line }) => {
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    const value =
      colon < 0
        ? ''
        : line
            .slice(colon + 1)
            .replace(/\r?\n(?=[ \t])/g, '')
            .trim();
    return [storable(name.trim()), storable(value)];
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
    subject: storable(parsed.subject ?? ''),
    messageId: storable(parsed.messageId ?? ''),
    // Exactly as decoded (receiving rule 4): the job stores them losslessly.
    html: typeof parsed.html === 'string' ? parsed.html : null,
    text: typeof parsed.text === 'string' ? parsed.text : null,
    headers: headerPairs(parsed.headerLines ?? []),
    attachments: parsed.attachments.map((a) => ({
      filename: a.filename ? storable(a.filename) : null,
      contentType: storable(a.contentType || 'application/octet-stream'),
      contentDisposition: a.contentDisposition === 'inline' ? 'inline' : 'attachment',
      contentId: a.contentId ? storable(a.contentId.replace(/^<|>$/g, '')) : null,
      content: a.content,
    })),
  };
}
