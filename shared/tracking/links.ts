// What tracking changes in an HTML body, found once per email: the links to rewrite and where the open pixel goes.
// The plan is a list of pieces (the HTML between, each rewritten link's href value, the pixel); each recipient's
// copy is the pieces joined with that recipient's tokens (renderHtml), so the per-recipient work is a few HMACs and
// a join, never a second scan.
//
// A link is rewritten only when its href is an absolute http(s) URL that a token can carry (tokens.ts). Never
// rewritten: any other scheme (javascript:, data:, vbscript:, mailto:, tel:, relative and fragment links), the
// unsubscribe link (its href or its text says unsubscribe, in the words the bulk rule knows, or it is Resend's
// `{{{RESEND_UNSUBSCRIBE_URL}}}` or our own unsubscribe page), a preference link (its href or text speaks of
// preferences or opting out), links already on a tracking host, and links over 2 KB. The HTML is scanned with one
// linear regular expression over `<a ...>` start and end tags, as the bulk rule's link finder does (content.ts):
// no parser, and a failed match stops at the next `<`.
import { decodeHTMLAttribute } from 'entities';
import { UNSUBSCRIBE_WORD } from '../emails/content.ts';
import { trackableUrl } from './tokens.ts';

export type Piece = string | { link: number } | { pixel: true };

export interface HtmlPlan {
  pieces: Piece[];
  /** The rewritten links' URLs (printable ASCII), by their index in `{link}` pieces. */
  links: string[];
}

export interface PlanOptions {
  open: boolean;
  click: boolean;
  /** Links never rewritten whatever they say: our unsubscribe pages, the tracking hosts. */
  keep: (url: string) => boolean;
  /** How the HTML string was decoded from its bytes; non-ASCII in a URL is percent-encoded in the same charset. */
  charset: 'utf8' | 'latin1';
}

const ANCHOR_TAGS = /<a\s[^<>]*>|<\/a\s*>/gi;
const HREF = /\shref\s*=\s*/i;
const PREFERENCE_WORD = /preferences?|opt(?:\s|&nbsp;|%20|[-_])*out|manage(?:\s|&nbsp;|%20|[-_])*subscription/i;
const RESEND_PLACEHOLDER = /\{\{\{/;

interface Anchor {
  /** Where the href value starts and ends in the HTML, quotes included. */
  from: number;
  to: number;
  url: string;
  /** Where the link's text starts (after the start tag). */
  textFrom: number;
}

/** The href attribute of an `<a>` start tag at `at`: the value's range in the HTML (quotes included) and text. */
function hrefOf(tag: string, at: number): { from: number; to: number; raw: string } | null {
  const m = HREF.exec(tag);
  if (!m) return null;
  const start = m.index + m[0].length;
  const quote = tag[start];
  if (quote === '"' || quote === "'") {
    const end = tag.indexOf(quote, start + 1);
    if (end < 0) return null;
    return { from: at + start, to: at + end + 1, raw: tag.slice(start + 1, end) };
  }
  const raw = /^[^\s>]*/.exec(tag.slice(start))![0];
  return { from: at + start, to: at + start + raw.length, raw };
}

/**
 * The URL a browser would follow, as printable ASCII: entities decoded, tabs and line breaks dropped (the URL
 * standard strips them), the rest of what is not printable ASCII percent-encoded in the page's charset.
 */
export function linkUrl(raw: string, charset: PlanOptions['charset']): string {
  const decoded = decodeHTMLAttribute(raw)
    .replace(/[\t\r\n]/g, '')
    .trim();
  return decoded.replace(/[^\x21-\x7e]+/g, (run) =>
    [...Buffer.from(run, charset === 'utf8' ? 'utf8' : 'latin1')]
      .map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`)
      .join(''),
  );
}

const saysUnsubscribe = (s: string) => UNSUBSCRIBE_WORD.test(s) || PREFERENCE_WORD.test(s);

/** Every `<a href>` with the range of its value and its text, in order. */
function anchorsOf(html: string): { anchor: Anchor; raw: string; textTo: number }[] {
  const found: { anchor: Anchor; raw: string; textTo: number }[] = [];
  let open: { anchor: Anchor; raw: string } | null = null;
  for (const m of html.matchAll(ANCHOR_TAGS)) {
    // An end tag, or a start tag (an <a> cannot nest), ends the open link's text.
    if (open) found.push({ ...open, textTo: m.index });
    open = null;
    if (m[0][1] === '/') continue;
    const href = hrefOf(m[0], m.index);
    if (href) open = { anchor: { from: href.from, to: href.to, url: '', textFrom: m.index + m[0].length }, ...href };
  }
  if (open) found.push({ ...open, textTo: html.length });
  return found;
}

/** The links to rewrite, in order. */
function trackedLinks(html: string, options: PlanOptions): Anchor[] {
  const out: Anchor[] = [];
  for (const { anchor, raw, textTo } of anchorsOf(html)) {
    if (RESEND_PLACEHOLDER.test(raw)) continue;
    const url = linkUrl(raw, options.charset);
    if (!trackableUrl(url) || options.keep(url)) continue;
    if (saysUnsubscribe(raw) || saysUnsubscribe(url) || saysUnsubscribe(html.slice(anchor.textFrom, textTo))) continue;
    out.push({ ...anchor, url });
  }
  return out.slice(0, 65_536);
}

/** Where the pixel goes: before the last `</body`, else at the end. */
function pixelAt(html: string): number {
  const at = html.toLowerCase().lastIndexOf('</body');
  return at < 0 ? html.length : at;
}

/** The plan for one HTML body, or null when tracking changes nothing in it. */
export function planHtml(html: string, options: PlanOptions): HtmlPlan | null {
  const links = options.click ? trackedLinks(html, options) : [];
  if (links.length === 0 && !options.open) return null;
  const cuts: { at: number; to: number; piece: Piece }[] = links.map((l, i) => ({
    at: l.from,
    to: l.to,
    piece: { link: i },
  }));
  if (options.open) {
    const at = pixelAt(html);
    // After any link that ends exactly there (the pixel never splits a value).
    cuts.push({ at, to: at, piece: { pixel: true } });
  }
  cuts.sort((a, b) => a.at - b.at || (a.to === a.at ? 1 : -1));
  const pieces: Piece[] = [];
  let from = 0;
  for (const cut of cuts) {
    if (cut.at > from) pieces.push(html.slice(from, cut.at));
    pieces.push(cut.piece);
    from = cut.to;
  }
  if (from < html.length) pieces.push(html.slice(from));
  return { pieces, links: links.map((l) => l.url) };
}

export interface RecipientUrls {
  click(index: number, url: string): string;
  open(): string;
}

const escapeAttribute = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

/** One recipient's HTML: the plan's pieces with that recipient's tracked URLs. */
export function renderHtml(plan: HtmlPlan, urls: RecipientUrls): string {
  let out = '';
  for (const piece of plan.pieces) {
    if (typeof piece === 'string') out += piece;
    else if ('link' in piece) out += `"${escapeAttribute(urls.click(piece.link, plan.links[piece.link]))}"`;
    else
      out += `<img src="${escapeAttribute(urls.open())}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;margin:0;padding:0">`;
  }
  return out;
}
