// A message submitted over SMTP, turned into the accept path's input. The raw MIME is what gets delivered
// (minus Bcc and our idempotency header); the parsed parts fill the email record the API shows.
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import { SmtpReply } from '../../shared/smtp/reply.ts';
import type { SendInput } from '../../shared/emails/prepare.ts';
import { AddressError, parseAddress } from '../../shared/emails/addresses.ts';

export interface Submitted {
  input: SendInput;
  raw: Buffer;
  messageId: string | null;
  idempotencyKey: string | null;
  /** The Sender header's address (RFC 5322 §3.6.2), when there is one: its domain is checked as From's is. */
  sender: { address: string; domain: string } | null;
}

const MAX_LINE = 998; // RFC 5322 §2.1.1, without the CRLF

/** RFC 5321 §2.3.8: lines end in CRLF only. Bare LF or CR, NUL and overlong lines are refused, not repaired. */
export function checkRaw(raw: Buffer): void {
  let lineStart = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === 0) throw new SmtpReply(554, '5.6.0 The message contains a NUL byte');
    if (c === 0x0d) {
      if (raw[i + 1] !== 0x0a)
        throw new SmtpReply(554, '5.6.0 The message contains a bare CR; lines must end with CRLF');
      if (i - lineStart > MAX_LINE) throw new SmtpReply(554, `5.6.0 A line is longer than ${MAX_LINE} characters`);
      i++;
      lineStart = i + 1;
    } else if (c === 0x0a) {
      throw new SmtpReply(554, '5.6.0 The message contains a bare LF; lines must end with CRLF');
    }
  }
  if (raw.length - lineStart > MAX_LINE) throw new SmtpReply(554, `5.6.0 A line is longer than ${MAX_LINE} characters`);
}

/** Removes every field named in `names` (with its folded continuation lines) from the header block. */
export function dropHeaders(raw: Buffer, names: string[]): Buffer {
  const text = raw.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const head = end < 0 ? text : text.slice(0, end + 2);
  const lower = names.map((n) => n.toLowerCase());
  const kept: string[] = [];
  let skipping = false;
  for (const line of head.split('\r\n')) {
    if (line === '') continue;
    if (/^[ \t]/.test(line)) {
      if (!skipping) kept.push(line);
      continue;
    }
    const name = line.slice(0, line.indexOf(':')).trim().toLowerCase();
    skipping = lower.includes(name);
    if (!skipping) kept.push(line);
  }
  return Buffer.from(`${kept.join('\r\n')}\r\n${end < 0 ? '\r\n' : text.slice(end + 2)}`, 'latin1');
}

const addressesOf = (a: AddressObject | AddressObject[] | undefined): { name: string; address: string }[] =>
  (Array.isArray(a) ? a : a ? [a] : [])
    .flatMap((o) => o.value)
    .filter((v) => v.address)
    .map((v) => ({ name: v.name, address: v.address! }));

const mailbox = (m: { name: string; address: string }) =>
  m.name ? `${m.name.replace(/[<>"\r\n]/g, '')} <${m.address}>` : m.address;

const refuse = (text: string) => new SmtpReply(550, `5.7.1 ${text}`);

/**
 * The one mailbox of an originator field. A group (`undisclosed:;`) or a list of authors leaves no single
 * address whose domain we can check and sign for (DMARC aligns with exactly one From domain), so it is refused.
 */
function soleMailbox(
  field: AddressObject | AddressObject[] | undefined,
  name: string,
): { name: string; address: string } {
  const values = (Array.isArray(field) ? field : field ? [field] : []).flatMap((o) => o.value);
  const [only] = values;
  if (values.length !== 1 || only.group || !only.address)
    throw refuse(`The ${name} header must hold exactly one mailbox (one address, not a group or a list)`);
  return { name: only.name, address: only.address };
}

/**
 * RFC 5322 §3.6: exactly one From field, here with exactly one mailbox, and at most one Sender field, a single
 * mailbox. The fields are counted in the raw header: mailparser keeps only the last of two From fields.
 */
function originators(parsed: ParsedMail): { from: { name: string; address: string }; sender: Submitted['sender'] } {
  const count = (key: string) => parsed.headerLines.filter((h) => h.key === key).length;
  if (count('from') !== 1)
    throw refuse(count('from') === 0 ? 'The message has no From header' : 'The message has more than one From header');
  const from = soleMailbox(parsed.from, 'From');
  if (count('sender') === 0) return { from, sender: null };
  if (count('sender') > 1) throw refuse('The message has more than one Sender header');
  const given = soleMailbox(parsed.headers.get('sender') as AddressObject | undefined, 'Sender');
  try {
    return { from, sender: parseAddress(given.address) };
  } catch (err) {
    if (err instanceof AddressError) throw refuse(`The Sender address ${given.address} ${err.message}`);
    throw err;
  }
}

/**
 * List-Unsubscribe as written (unfolded). mailparser files it under `list` as parsed parts, never under its own
 * name, so it is read from the raw header lines. The record keeps at most 2000 characters (the accept path's
 * header limit); the delivered message keeps the field whole.
 */
function listUnsubscribe(parsed: ParsedMail): Record<string, string> {
  const values = parsed.headerLines
    .filter((h) => h.key === 'list-unsubscribe')
    .map((h) =>
      h.line
        .slice(h.line.indexOf(':') + 1)
        .replace(/\r?\n(?=[ \t])/g, '')
        .trim(),
    );
  const value = values
    .filter(Boolean)
    .join(', ')
    .replace(/[\r\n\0]/g, ' ')
    .slice(0, 2000);
  return value ? { 'List-Unsubscribe': value } : {};
}

export async function readSubmission(raw: Buffer, envelope: { to: string[] }): Promise<Submitted> {
  checkRaw(raw);
  const parsed = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true });
  const { from, sender } = originators(parsed);
  const rcpt = new Set(envelope.to.map((a) => a.toLowerCase()));
  const inHeader = (list: { name: string; address: string }[]) => list.filter((m) => rcpt.has(m.address.toLowerCase()));
  let to = inHeader(addressesOf(parsed.to));
  const cc = inHeader(addressesOf(parsed.cc));
  const shown = new Set([...to, ...cc].map((m) => m.address.toLowerCase()));
  let bcc = envelope.to.filter((a) => !shown.has(a.toLowerCase())).map((address) => ({ name: '', address }));
  if (to.length === 0) [to, bcc] = [bcc, []];
  const header = (name: string) => {
    const v = parsed.headers.get(name);
    return typeof v === 'string' ? v : null;
  };
  return {
    input: {
      from: mailbox(from),
      to: to.map(mailbox),
      cc: cc.map(mailbox),
      bcc: bcc.map(mailbox),
      reply_to: addressesOf(parsed.replyTo).map(mailbox),
      subject: parsed.subject ?? '',
      html: typeof parsed.html === 'string' ? parsed.html : null,
      text: parsed.text ?? (typeof parsed.html === 'string' ? undefined : ''),
      headers: listUnsubscribe(parsed),
      attachments: parsed.attachments.map((a) => ({
        filename: a.filename ?? null,
        content: a.content.toString('base64'),
        content_type: a.contentType,
        content_id: a.contentDisposition === 'inline' && a.contentId ? a.contentId.replace(/^<|>$/g, '') : null,
      })),
    },
    raw: dropHeaders(raw, ['bcc', 'idempotency-key', 'resend-idempotency-key']),
    messageId: parsed.messageId ?? null,
    idempotencyKey: header('idempotency-key') ?? header('resend-idempotency-key'),
    sender,
  };
}
