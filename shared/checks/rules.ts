// The rule of each pre-send check, and its thresholds (docs/templates.md lists them). Each rule answers one or more
// findings: one per problem (with its block when the content is a block document), or one `pass`. Pure: what the
// network says of links and images (network.ts) comes in as `probes`.
import { hasUnsubscribe } from '../emails/content.ts';
import { collapse, type HtmlFacts } from './facts.ts';
import type { CheckCode, CheckedContent, EmailCheck, Image, Link } from './types.ts';

export const SUBJECT_MAX_CHARS = 78;
export const PREHEADER_MIN_CHARS = 20;
export const PREHEADER_MAX_CHARS = 150;
export const IMAGE_WEIGHT_WARN_BYTES = 1024 * 1024;
export const IMAGE_WEIGHT_FAIL_BYTES = 5 * 1024 * 1024;
export const TEXT_MIN_CHARS = 50;
export const TEXT_PER_IMAGE_CHARS = 100;
/** Findings of one code, at most; the last says how many more there were. */
export const MAX_FINDINGS = 20;

export const TITLES: Record<CheckCode, string> = {
  unresolved_variable: 'Variables',
  links: 'Links',
  link_scheme: 'Link schemes',
  subject: 'Subject',
  preheader: 'Preview text',
  alt_text: 'Image alt text',
  image_weight: 'Image weight',
  text_ratio: 'Text and images',
  unsubscribe: 'Unsubscribe link',
};

/** Each rule in a sentence, for the API reference (docs/templates.md says the same at length). */
export const RULES: Record<CheckCode, string> = {
  unresolved_variable:
    'fail: a variable without a value or fallback, or a merge tag left in the subject, html or text (`{{{RESEND_UNSUBSCRIBE_URL}}}` excepted)',
  links:
    'fail: a link that is not a URL, is relative, names no host or address, or (network checks on) answers 404/410; warn: an empty or `#` link, another 4xx/5xx, no answer, a private address not asked',
  link_scheme: 'fail: a javascript:, vbscript:, data: or file: link; warn: an http: link',
  subject: `fail: empty; warn: longer than ${SUBJECT_MAX_CHARS} characters, in capitals, or \`!!!\`/\`???\``,
  preheader: `warn: no preview text, one that repeats the subject, one under ${PREHEADER_MIN_CHARS} characters, or a hidden preheader over ${PREHEADER_MAX_CHARS}`,
  alt_text: 'warn: an image without alt, or a linked image whose alt is empty',
  image_weight: `fail: images over ${IMAGE_WEIGHT_FAIL_BYTES / 1024} KB together; warn: over ${IMAGE_WEIGHT_WARN_BYTES / 1024} KB, or a data: image (sizes of hosted images known only with network checks on)`,
  text_ratio: `fail: images with under ${TEXT_MIN_CHARS} characters of text; warn: under ${TEXT_PER_IMAGE_CHARS} characters per image`,
  unsubscribe:
    'fail: no unsubscribe link and no List-Unsubscribe header; warn: only the header (a topic send adds one)',
};

/** What the network said of a URL (network.ts), when network checks are on. */
export interface Probe {
  status: number | null;
  bytes: number | null;
  problem: 'unreachable' | 'timeout' | 'private_target' | null;
}

export interface Facts extends HtmlFacts {
  content: CheckedContent;
  probes: Map<string, Probe> | null;
}

const finding = (code: CheckCode, status: EmailCheck['status'], message: string, blockId?: string): EmailCheck => ({
  code,
  status,
  title: TITLES[code],
  message,
  ...(blockId ? { block_id: blockId } : {}),
});

/** The findings, capped at MAX_FINDINGS; none found: one `pass` saying `passed`. */
function result(code: CheckCode, found: EmailCheck[], passed: string): EmailCheck[] {
  if (found.length === 0) return [finding(code, 'pass', passed)];
  if (found.length <= MAX_FINDINGS) return found;
  const rest = found.slice(MAX_FINDINGS - 1);
  const worst = rest.some((f) => f.status === 'fail') ? 'fail' : 'warn';
  return [...found.slice(0, MAX_FINDINGS - 1), finding(code, worst, `${rest.length} more findings like these.`)];
}

const PLACEHOLDER = '{{{RESEND_UNSUBSCRIBE_URL}}}';
/** A merge tag left in the message: `{{NAME}}`, `{{{NAME}}}`, `{{#if X}}`... (not the unsubscribe placeholder). */
const MERGE_TAG = /\{\{\{?\s*[#/^>!]?\s*[A-Za-z_@][^{}]{0,200}?\}\}\}?/g;

export function unresolvedVariable(f: Facts): EmailCheck[] {
  const c = f.content;
  const found = (c.missingVariables ?? []).map((name) =>
    finding('unresolved_variable', 'fail', `\`${name}\` has no value and no fallback: a send must give it.`),
  );
  const seen = new Set<string>();
  for (const [field, value] of [
    ['subject', c.subject],
    ['html', c.html],
    ['text', c.text],
  ] as const) {
    for (const m of (value ?? '').matchAll(MERGE_TAG)) {
      if (m[0] === PLACEHOLDER || seen.has(m[0])) continue;
      seen.add(m[0]);
      found.push(
        finding('unresolved_variable', 'fail', `\`${m[0]}\` in the ${field} would reach recipients as written.`),
      );
    }
  }
  return result('unresolved_variable', found, 'Every variable has a value or a fallback.');
}

const linksOf = (f: Facts): Link[] => (f.content.blocks ? f.content.blocks.links : f.links);
const imagesOf = (f: Facts): Image[] => (f.content.blocks ? f.content.blocks.images : f.images);
const shown = (href: string) => (href.length > 80 ? `${href.slice(0, 77)}...` : href);

/** Why a link is not well-formed, or null. */
function malformed(href: string): string | null {
  if (href === '' || href === '#') return null;
  if (/[\s<>"]/.test(href)) return 'holds spaces or characters a URL cannot';
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return href.startsWith('/') || href.startsWith('.')
      ? 'is relative: mail has no page to be relative to'
      : 'is not a URL';
  }
  if (
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    !url.hostname.includes('.') &&
    url.hostname !== 'localhost'
  )
    return 'names no host';
  if (url.protocol === 'mailto:' && !url.pathname.includes('@')) return 'names no address';
  return null;
}

export function links(f: Facts): EmailCheck[] {
  const found: EmailCheck[] = [];
  const all = linksOf(f).filter((l) => l.href !== PLACEHOLDER);
  for (const l of all) {
    if (l.href === '' || l.href === '#') {
      found.push(
        finding('links', 'warn', `A link (“${shown(l.text)}”) goes nowhere (\`${l.href || '""'}\`).`, l.block_id),
      );
      continue;
    }
    const problem = malformed(l.href);
    if (problem) {
      found.push(finding('links', 'fail', `\`${shown(l.href)}\` ${problem}.`, l.block_id));
      continue;
    }
    const probe = f.probes?.get(l.href);
    if (!probe) continue;
    if (probe.problem === 'private_target')
      found.push(
        finding('links', 'warn', `\`${shown(l.href)}\` was not checked: it is a private address.`, l.block_id),
      );
    else if (probe.problem)
      found.push(finding('links', 'warn', `\`${shown(l.href)}\` did not answer (${probe.problem}).`, l.block_id));
    else if (probe.status === 404 || probe.status === 410)
      found.push(finding('links', 'fail', `\`${shown(l.href)}\` is broken: it answered ${probe.status}.`, l.block_id));
    else if (probe.status !== null && probe.status >= 400)
      found.push(finding('links', 'warn', `\`${shown(l.href)}\` answered ${probe.status}.`, l.block_id));
  }
  const checked = f.probes ? ' and answered' : '';
  return result('links', found, all.length ? `${all.length} link(s), all well-formed${checked}.` : 'No links.');
}

const DANGEROUS = /^\s*(?:javascript|vbscript|data|file):/i;

export function linkScheme(f: Facts): EmailCheck[] {
  const found: EmailCheck[] = [];
  for (const l of linksOf(f)) {
    const scheme = /^\s*([A-Za-z][A-Za-z0-9+.-]*):/.exec(l.href)?.[1].toLowerCase();
    if (DANGEROUS.test(l.href))
      found.push(
        finding(
          'link_scheme',
          'fail',
          `A ${scheme}: link (\`${shown(l.href)}\`) is refused by mail clients and marks the message as dangerous.`,
          l.block_id,
        ),
      );
    else if (scheme === 'http')
      found.push(
        finding(
          'link_scheme',
          'warn',
          `\`${shown(l.href)}\` is not https: the reader's click travels unencrypted.`,
          l.block_id,
        ),
      );
  }
  return result('link_scheme', found, 'Every link uses https, mailto: or tel:.');
}

export function subject(f: Facts): EmailCheck[] {
  const s = (f.content.subject ?? '').trim();
  if (s === '') return [finding('subject', 'fail', 'The subject is empty.')];
  const found: EmailCheck[] = [];
  if (s.length > SUBJECT_MAX_CHARS)
    found.push(
      finding(
        'subject',
        'warn',
        `The subject has ${s.length} characters; clients cut it near ${SUBJECT_MAX_CHARS} or sooner.`,
      ),
    );
  const letters = s.replace(/[^\p{L}]/gu, '');
  if (letters.length >= 8 && letters === letters.toUpperCase() && letters !== letters.toLowerCase())
    found.push(finding('subject', 'warn', 'The subject is in capitals, which spam filters and readers both dislike.'));
  if (/[!?]{3,}/.test(s)) found.push(finding('subject', 'warn', 'The subject repeats `!` or `?`.'));
  return result('subject', found, `“${s}” (${s.length} characters).`);
}

export function preheader(f: Facts): EmailCheck[] {
  const subjectLine = collapse(f.content.subject ?? '');
  const explicit = f.hiddenPreview;
  const preview =
    explicit ??
    (f.content.html !== null ? f.visibleText : collapse(f.content.text ?? '')).slice(0, PREHEADER_MAX_CHARS);
  if (preview === '')
    return [finding('preheader', 'warn', 'There is no preview text: clients show nothing after the subject.')];
  if (preview === subjectLine) return [finding('preheader', 'warn', 'The preview text repeats the subject.')];
  if (preview.length < PREHEADER_MIN_CHARS)
    return [finding('preheader', 'warn', `The preview text is short (${preview.length} characters): “${preview}”.`)];
  if (explicit && explicit.length > PREHEADER_MAX_CHARS)
    return [
      finding(
        'preheader',
        'warn',
        `The preheader has ${explicit.length} characters; clients show about ${PREHEADER_MAX_CHARS}.`,
      ),
    ];
  return [
    finding('preheader', 'pass', `Clients will show: “${preview.slice(0, 90)}${preview.length > 90 ? '...' : ''}”.`),
  ];
}

export function altText(f: Facts): EmailCheck[] {
  const found: EmailCheck[] = [];
  for (const i of imagesOf(f)) {
    if (i.alt === null)
      found.push(finding('alt_text', 'warn', `The image \`${shown(i.src)}\` has no alt text.`, i.block_id));
    else if (i.alt.trim() === '' && i.linked)
      found.push(
        finding(
          'alt_text',
          'warn',
          `The linked image \`${shown(i.src)}\` has an empty alt: its link has no words.`,
          i.block_id,
        ),
      );
  }
  const n = imagesOf(f).length;
  return result('alt_text', found, n ? `All ${n} image(s) have alt text.` : 'No images.');
}

/** The bytes of a data: URI's content. */
function dataBytes(src: string): number {
  const comma = src.indexOf(',');
  const body = src.slice(comma + 1);
  return /;base64,/i.test(src.slice(0, comma + 1)) ? Math.floor((body.replace(/\s/g, '').length * 3) / 4) : body.length;
}

export function imageWeight(f: Facts): EmailCheck[] {
  const found: EmailCheck[] = [];
  let total = 0;
  let unknown = 0;
  for (const i of imagesOf(f)) {
    if (/^data:/i.test(i.src)) {
      total += dataBytes(i.src);
      found.push(
        finding(
          'image_weight',
          'warn',
          'An image is embedded as a data: URI, which many clients do not show: host it.',
          i.block_id,
        ),
      );
      continue;
    }
    const bytes = f.probes?.get(i.src)?.bytes;
    if (bytes === undefined || bytes === null) unknown++;
    else total += bytes;
  }
  const kb = Math.round(total / 1024);
  if (total > IMAGE_WEIGHT_FAIL_BYTES)
    found.push(
      finding('image_weight', 'fail', `The images weigh ${kb} KB; at most ${IMAGE_WEIGHT_FAIL_BYTES / 1024} KB.`),
    );
  else if (total > IMAGE_WEIGHT_WARN_BYTES)
    found.push(
      finding(
        'image_weight',
        'warn',
        `The images weigh ${kb} KB: slow on mobile networks (keep under ${IMAGE_WEIGHT_WARN_BYTES / 1024} KB).`,
      ),
    );
  const n = imagesOf(f).length;
  const note = unknown ? ` (${unknown} not weighed${f.probes ? ': no size given' : ': network checks are off'})` : '';
  return result('image_weight', found, n ? `${n} image(s), ${kb} KB known${note}.` : 'No images.');
}

export function textRatio(f: Facts): EmailCheck[] {
  if (f.content.html === null) return [finding('text_ratio', 'pass', 'A text-only message.')];
  const chars = f.visibleText.length;
  const n = imagesOf(f).length;
  if (n > 0 && chars < TEXT_MIN_CHARS)
    return [
      finding(
        'text_ratio',
        'fail',
        `The message is images with ${chars} characters of text: filters distrust it and readers who block images see nothing.`,
      ),
    ];
  if (n > 0 && chars < n * TEXT_PER_IMAGE_CHARS)
    return [
      finding(
        'text_ratio',
        'warn',
        `${chars} characters of text for ${n} images: aim for ${TEXT_PER_IMAGE_CHARS} or more per image.`,
      ),
    ];
  return [finding('text_ratio', 'pass', `${chars} characters of text for ${n} image(s).`)];
}

export function unsubscribe(f: Facts): EmailCheck[] {
  if (hasUnsubscribe(f.content.html, f.content.text, {}))
    return [finding('unsubscribe', 'pass', 'The message has an unsubscribe link.')];
  if (f.content.listUnsubscribe)
    return [
      finding(
        'unsubscribe',
        'warn',
        'Only the List-Unsubscribe header lets readers leave: add a visible link (a footer block has one).',
      ),
    ];
  return [finding('unsubscribe', 'fail', 'The message has no unsubscribe link and no List-Unsubscribe header.')];
}
