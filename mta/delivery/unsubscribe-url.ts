// Resend's `{{{RESEND_UNSUBSCRIBE_URL}}}` in a send that is not a broadcast (issue 19): each recipient's copy gets
// its own signed link to the preference page, the URL a List-Unsubscribe would carry (compose.ts), so one recipient
// unsubscribing never unsubscribes another of the same email. Broadcasts fill it when they render each copy
// (shared/broadcasts/merge.ts); this fills it in the message itself, after tracking made the recipient's copy
// (tracking leaves a link holding the placeholder alone, shared/tracking/links.ts).
//
// The text parts (text/plain, text/html, not attachments) are decoded, the placeholder replaced, and encoded again:
// a part in base64 stays base64, any other becomes quoted-printable (the URL may make a line longer than 7bit
// allows). Parts in a charset that is not ASCII-compatible byte for byte, and every other byte, are left as they
// came.
import type { SplitNode } from 'mailsplit';
import { charsetOf, decodeBody, encodePartBody, partsOf } from '../../shared/tracking/mime.ts';
import { unsubscribeToken } from '../../shared/emails/mail-tokens.ts';
import type { EmailRow } from '../../shared/emails/present.ts';

export const UNSUBSCRIBE_URL_TAG = '{{{RESEND_UNSUBSCRIBE_URL}}}';

/** Does the email's content carry the placeholder (each recipient then gets a copy of its own)? */
export function needsOwnUnsubscribeUrl(email: Pick<EmailRow, 'html' | 'text' | 'source'>): boolean {
  if (email.source === 'broadcast') return false;
  return !!email.html?.includes(UNSUBSCRIBE_URL_TAG) || !!email.text?.includes(UNSUBSCRIBE_URL_TAG);
}

/** The preference page link of one recipient, as List-Unsubscribe names it. */
export function recipientUnsubscribeUrl(deps: { secrets: Buffer; publicBaseUrl: string }, recipientId: string): string {
  return `${deps.publicBaseUrl}/unsubscribe/${unsubscribeToken(deps.secrets, recipientId)}`;
}

const isText = (node: SplitNode) =>
  !node.multipart &&
  (node.contentType === 'text/plain' || node.contentType === 'text/html') &&
  node.disposition !== 'attachment';

/** In html the URL is an attribute value or text: `&` is the one character of ours that needs escaping there. */
const escapeHtml = (url: string) => url.replace(/&/g, '&amp;');

/** The part's body with the placeholder filled, encoded again; null when it holds none (the part is kept). */
function fillPart(node: SplitNode, body: Buffer, url: string): { head: Buffer; body: Buffer } | null {
  const tail = /\r?\n$/.exec(body.toString('latin1'))?.[0] ?? '';
  const charset = charsetOf(node);
  if (!charset) return null;
  const text = decodeBody(body.subarray(0, body.length - tail.length), node.encoding).toString(charset);
  if (!text.includes(UNSUBSCRIBE_URL_TAG)) return null;
  const filled = text.split(UNSUBSCRIBE_URL_TAG).join(node.contentType === 'text/html' ? escapeHtml(url) : url);
  const encoding = node.encoding === 'base64' ? 'base64' : 'quoted-printable';
  if (encoding !== node.encoding) node.headers.update('Content-Transfer-Encoding', encoding);
  return { head: node.getHeaders(), body: encodePartBody(Buffer.from(filled, charset), encoding, tail) };
}

/** One recipient's copy of `raw` with the placeholder replaced by `url` in its text parts. */
export async function fillUnsubscribeUrl(raw: Buffer, url: string): Promise<Buffer> {
  const out: Buffer[] = [];
  for (const part of await partsOf(raw, isText)) {
    if (Buffer.isBuffer(part)) {
      out.push(part);
      continue;
    }
    const filled = fillPart(part.node, part.body, url);
    if (filled) out.push(filled.head, filled.body);
    else out.push(part.node.getHeaders(), part.body);
  }
  return Buffer.concat(out);
}
