// Tracking in a whole message: its HTML parts found, decoded and planned once per email (links.ts), and each
// recipient's copy made from that plan: every byte outside the HTML parts is the message's own (mailsplit gives the
// MIME nodes back as they came), each HTML part is the recipient's HTML encoded again. A composed message and one a
// client submitted over SMTP go the same way, and so does the stored message a retry sends.
//
// An HTML part keeps base64 when it had it; anything else becomes quoted-printable (a rewritten link can make a
// line longer than 7bit or 8bit allow, RFC 5322 §2.1.1). Parts in a charset that is not ASCII-compatible byte for
// byte (UTF-16, ISO-2022-JP, ...) and attachments are left alone.
import { Splitter, type SplitNode } from 'mailsplit';
import * as libqp from 'libqp';
import * as libbase64 from 'libbase64';
import { planHtml, renderHtml, type HtmlPlan, type PlanOptions, type RecipientUrls } from './links.ts';

interface HtmlPart {
  /** The part's header block, with quoted-printable named when the encoding changed. */
  head: Buffer;
  plan: HtmlPlan;
  encoding: 'quoted-printable' | 'base64';
  charset: PlanOptions['charset'];
  /** The line break the body ended with (the part runs to the end of a single-part message), else ''. */
  tail: string;
}

export interface MessagePlan {
  segments: (Buffer | HtmlPart)[];
  /** Tracked links across the message's HTML parts. */
  links: number;
}

/** How the part's bytes map to a string the scan can read (and back): UTF-8, or byte for byte. */
export function charsetOf(node: SplitNode): PlanOptions['charset'] | null {
  const name = (node.charset || 'us-ascii').toLowerCase().replace(/^"|"$/g, '');
  if (/^(utf-?8|us-ascii|ascii)$/.test(name)) return 'utf8';
  if (/^(iso-8859-\d+|latin-?\d|windows-125\d|cp125\d|koi8-[ru])$/.test(name)) return 'latin1';
  return null;
}

export function decodeBody(body: Buffer, encoding: string): Buffer {
  if (encoding === 'quoted-printable') return libqp.decode(body.toString('latin1'));
  if (encoding === 'base64') return Buffer.from(body.toString('latin1'), 'base64');
  return body;
}

/** The message's parts as mailsplit gives them, in order. */
export function split(raw: Buffer): Promise<(SplitNode | { type: 'body' | 'data'; value: Buffer })[]> {
  return new Promise((resolve, reject) => {
    const chunks: (SplitNode | { type: 'body' | 'data'; value: Buffer })[] = [];
    const splitter = new Splitter();
    splitter.on('data', (c) => chunks.push(c));
    splitter.on('end', () => resolve(chunks));
    splitter.on('error', reject);
    splitter.end(raw);
  });
}

/**
 * The message in order: each part `want` picks whole (its node, to read and change its headers, and its body's
 * bytes), every other chunk as its own bytes.
 */
export async function partsOf(
  raw: Buffer,
  want: (node: SplitNode) => boolean,
): Promise<(Buffer | { node: SplitNode; body: Buffer })[]> {
  const out: (Buffer | { node: SplitNode; body: Buffer })[] = [];
  let open: { node: SplitNode; body: Buffer[] } | null = null;
  for (const chunk of await split(raw)) {
    if (chunk.type === 'body' && open) {
      open.body.push(chunk.value);
      continue;
    }
    if (open) out.push({ node: open.node, body: Buffer.concat(open.body) });
    open = null;
    if (chunk.type === 'node' && want(chunk)) open = { node: chunk, body: [] };
    else out.push(chunk.type === 'node' ? chunk.getHeaders() : chunk.value);
  }
  if (open) out.push({ node: open.node, body: Buffer.concat(open.body) });
  return out;
}

/** A text part's bytes encoded again: base64 or quoted-printable, 76-character lines, `tail` after. */
export function encodePartBody(bytes: Buffer, encoding: 'base64' | 'quoted-printable', tail: string): Buffer {
  const text =
    encoding === 'base64' ? libbase64.wrap(libbase64.encode(bytes), 76) : libqp.wrap(libqp.encode(bytes), 76);
  return Buffer.from(text + tail, 'latin1');
}

const isHtml = (node: SplitNode) =>
  !node.multipart && node.contentType === 'text/html' && node.disposition !== 'attachment';

/**
 * The plan for one message, or null when tracking changes nothing in it (no HTML part, or nothing to track there):
 * then every recipient gets the message as it is.
 */
export async function planMessage(raw: Buffer, options: Omit<PlanOptions, 'charset'>): Promise<MessagePlan | null> {
  const segments: MessagePlan['segments'] = [];
  let links = 0;
  let changed = false;
  for (const part of await partsOf(raw, isHtml)) {
    if (Buffer.isBuffer(part)) {
      segments.push(part);
      continue;
    }
    const { node, body: bytes } = part;
    // The line break a body ends with is the message's (a single part runs to the end), kept as it is.
    const tail = /\r?\n$/.exec(bytes.toString('latin1'))?.[0] ?? '';
    const charset = charsetOf(node);
    const html = charset && decodeBody(bytes.subarray(0, bytes.length - tail.length), node.encoding).toString(charset);
    const plan = html ? planHtml(html, { ...options, charset: charset! }) : null;
    if (!plan) {
      segments.push(node.getHeaders(), bytes);
      continue;
    }
    const encoding = node.encoding === 'base64' ? 'base64' : 'quoted-printable';
    if (encoding !== node.encoding) node.headers.update('Content-Transfer-Encoding', encoding);
    segments.push({ head: node.getHeaders(), plan, encoding, charset: charset!, tail });
    links += plan.links.length;
    changed = true;
  }
  return changed ? { segments, links } : null;
}

function encodePart(part: HtmlPart, html: string): Buffer {
  return encodePartBody(Buffer.from(html, part.charset), part.encoding, part.tail);
}

/** One recipient's copy of the message. */
export function personalize(plan: MessagePlan, urls: RecipientUrls): Buffer {
  const out: Buffer[] = [];
  for (const s of plan.segments) {
    if (Buffer.isBuffer(s)) out.push(s);
    else out.push(s.head, encodePart(s, renderHtml(s.plan, urls)));
  }
  return Buffer.concat(out);
}
