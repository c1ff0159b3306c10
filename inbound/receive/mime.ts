// The MIME structure of a report, just far enough to read it (RFC 2045, 2046): the leaf parts with their
// decoded bodies, without descending into an enclosed message (message/rfc822 and its kin stay one part: the
// original message a report returns is the sender's text, never the report's). mailparser is not used here
// because it folds an inline message/rfc822 into the text, where the original's To would read as the report's.
import { fieldGroups, first, type Fields } from './report-fields.ts';

export interface Part {
  /** Lower-cased media type (`message/delivery-status`); text/plain when the part has none (RFC 2045 §5.2). */
  type: string;
  headers: Fields;
  body: Buffer;
}

const MAX_DEPTH = 8;

/** `type/subtype; name=value; name="quoted value"` → the type and its parameters (names lower-cased). */
export function contentType(value: string | null): { type: string; params: Map<string, string> } {
  const [type, ...rest] = (value ?? 'text/plain').split(';');
  const params = new Map<string, string>();
  for (const m of rest.join(';').matchAll(/([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))/g)) {
    params.set(m[1].toLowerCase(), m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3]);
  }
  return { type: type.trim().toLowerCase() || 'text/plain', params };
}

function decode(body: Buffer, encoding: string | null): Buffer {
  switch ((encoding ?? '').trim().toLowerCase()) {
    case 'base64':
      return Buffer.from(body.toString('latin1').replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
    case 'quoted-printable':
      return Buffer.from(
        body
          .toString('latin1')
          .replace(/=\r?\n/g, '')
          .replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
        'latin1',
      );
    default:
      return body;
  }
}

/** A part's body as text in its charset (utf-8 when unnamed or unknown). */
export function text(part: Part): string {
  const charset = contentType(first(part.headers, 'content-type')).params.get('charset') ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(part.body);
  } catch {
    return part.body.toString('utf8');
  }
}

function split(raw: Buffer): { headers: Fields; body: Buffer } {
  const s = raw.toString('latin1');
  const m = /\r?\n\r?\n/.exec(s);
  const head = m ? s.slice(0, m.index) : s;
  const body = m ? raw.subarray(m.index + m[0].length) : Buffer.alloc(0);
  return { headers: fieldGroups(head)[0] ?? new Map(), body };
}

function walk(raw: Buffer, depth: number, out: Part[]): void {
  const { headers, body } = split(raw);
  const { type, params } = contentType(first(headers, 'content-type'));
  const boundary = params.get('boundary');
  if (type.startsWith('multipart/') && boundary && depth < MAX_DEPTH) {
    // RFC 2046 §5.1.1: parts lie between delimiter lines `--boundary`; the preamble and epilogue are not parts.
    const s = body.toString('latin1');
    const delimiter = new RegExp(
      `(?:^|\\r?\\n)--${boundary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(--)?[ \\t]*(?=\\r?\\n|$)`,
      'g',
    );
    const marks = [...s.matchAll(delimiter)];
    for (let i = 0; i < marks.length - 1 && !marks[i][1]; i++) {
      const start = marks[i].index! + marks[i][0].length;
      const from = s.slice(start).match(/^\r?\n/)?.[0].length ?? 0;
      walk(Buffer.from(s.slice(start + from, marks[i + 1].index), 'latin1'), depth + 1, out);
    }
    return;
  }
  out.push({ type, headers, body: decode(body, first(headers, 'content-transfer-encoding')) });
}

/** The leaf parts of a message, in order; a message that is not MIME is one text/plain part. */
export function mimeParts(raw: Buffer): Part[] {
  const out: Part[] = [];
  walk(raw, 0, out);
  return out;
}
