// Reading mail that reached a return-path address (ARCHITECTURE, "The path of a received email", point 4):
// an RFC 3464 delivery status notification, an RFC 5965 feedback (complaint) report, or one of the common
// non-standard bounces (plain.ts), into findings about recipients. Pure: bytes in, findings out; null when
// the message is none of these.
import { readDsn } from './dsn.ts';
import { readArf } from './arf.ts';
import { readPlainBounce } from './plain.ts';
import { originalRecipients } from './report-fields.ts';
import { mimeParts, text, type Part } from './mime.ts';
import type { Finding } from './finding.ts';

export interface Report {
  format: 'dsn' | 'arf' | 'qmail' | 'plain';
  findings: Finding[];
  /** To and Cc of the returned original message, when the report carries its headers. */
  originalRecipients: string[];
}

/** An email has at most 50 recipients per send; a report naming more than this is not read further. */
const MAX_FINDINGS = 100;

const ORIGINAL = ['message/rfc822', 'text/rfc822-headers', 'message/global', 'message/global-headers'];

/** The report's own prose: its text/plain parts, or its HTML with the tags taken out when it has no plain text. */
function prose(parts: Part[]): string {
  const plain = parts.filter((p) => p.type === 'text/plain').map(text);
  if (plain.length) return plain.join('\n');
  return parts
    .filter((p) => p.type === 'text/html')
    .map((p) =>
      text(p)
        .replace(/<(style|script)[\s\S]*?<\/\1>/gi, '')
        .replace(/<br\s*\/?>|<\/(p|div|tr|li|h\d)>/gi, '\n')
        .replace(/<[^>]*>/g, ' ')
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&nbsp;/g, ' ')
        .replace(/&amp;/g, '&'),
    )
    .join('\n');
}

export function readReport(raw: Buffer): Report | null {
  const parts = mimeParts(raw);
  const part = (types: string[]) => parts.find((p) => types.includes(p.type));
  const original = part(ORIGINAL);
  const recipients = original ? originalRecipients(text(original)) : [];

  // RFC 3464 §2 (and RFC 6533 §3 for the UTF-8 form): the machine-readable part decides, whatever the text says.
  const dsn = part(['message/delivery-status', 'message/global-delivery-status']);
  if (dsn)
    return { format: 'dsn', findings: readDsn(text(dsn)).slice(0, MAX_FINDINGS), originalRecipients: recipients };
  // RFC 5965 §2: a multipart/report whose second part is message/feedback-report.
  const arf = part(['message/feedback-report']);
  if (arf)
    return { format: 'arf', findings: readArf(text(arf)).slice(0, MAX_FINDINGS), originalRecipients: recipients };

  const plain = readPlainBounce(prose(parts));
  if (!plain) return null;
  return {
    format: plain.format,
    findings: plain.findings,
    originalRecipients: recipients.length ? recipients : plain.originalRecipients,
  };
}
