// What the checks need to know of a message's HTML, read once with htmlparser2 (a maintained, forgiving HTML
// tokenizer: the HTML of real email is rarely well-formed): its links, its images, the text a reader sees, and the
// preview text a client shows after the subject.
import { Parser } from 'htmlparser2';
import type { Image, Link } from './types.ts';

export interface HtmlFacts {
  links: Link[];
  images: Image[];
  /** The visible text, whitespace collapsed. */
  visibleText: string;
  /** The text of a hidden element before any visible text (a preheader), or null. */
  hiddenPreview: string | null;
}

/** Elements whose content a reader never sees as text. */
const SKIPPED = new Set(['head', 'title', 'style', 'script', 'noscript', 'template']);
const HIDDEN_STYLE =
  /display\s*:\s*none|visibility\s*:\s*hidden|max-height\s*:\s*0(?![.\d]*[1-9])|opacity\s*:\s*0(?![.\d]*[1-9])/i;

interface Open {
  name: string;
  skipped: boolean;
  hidden: boolean;
  link: Link | null;
}

export function htmlFacts(html: string): HtmlFacts {
  const links: Link[] = [];
  const images: Image[] = [];
  const visible: string[] = [];
  let hidden: string[] | null = null;
  let hiddenPreview: string | null = null;
  const stack: Open[] = [];
  const top = () => stack[stack.length - 1];
  const openLink = () => [...stack].reverse().find((o) => o.link)?.link ?? null;

  const parser = new Parser(
    {
      onopentag(name, attribs) {
        const parent = top();
        const open: Open = {
          name,
          skipped: (parent?.skipped ?? false) || SKIPPED.has(name),
          hidden: (parent?.hidden ?? false) || 'hidden' in attribs || HIDDEN_STYLE.test(attribs.style ?? ''),
          link: null,
        };
        if ((name === 'a' || name === 'area') && attribs.href !== undefined && !open.skipped) {
          open.link = { href: attribs.href.trim(), text: attribs.alt ?? '' };
          links.push(open.link);
        }
        if (name === 'img' && !open.skipped) {
          const link = openLink();
          images.push({ src: (attribs.src ?? '').trim(), alt: attribs.alt ?? null, linked: link !== null });
          if (link && attribs.alt) link.text += ` ${attribs.alt}`;
        }
        // The first hidden element met before any visible text holds the preview text.
        if (open.hidden && !parent?.hidden && hiddenPreview === null && visible.length === 0) hidden = [];
        stack.push(open);
      },
      ontext(data) {
        const at = top();
        if (at?.skipped) return;
        if (at?.hidden) {
          hidden?.push(data);
          return;
        }
        if (data.trim() === '') return;
        visible.push(data);
        const link = openLink();
        if (link) link.text += data;
      },
      onclosetag(name) {
        const index = stack.map((o) => o.name).lastIndexOf(name);
        if (index < 0) return;
        const closing = stack[index];
        stack.length = index;
        if (hidden && closing.hidden && !top()?.hidden) {
          const text = collapse(hidden.join(' '));
          hiddenPreview = text || null;
          hidden = null;
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  for (const l of links) l.text = collapse(l.text);
  return { links, images, visibleText: collapse(visible.join(' ')), hiddenPreview };
}

// Preheader padding (zero-width spaces and joiners, U+034F) counts as nothing.
export const collapse = (s: string) => s.replace(/(?:[\s\u00a0\u200b-\u200d\ufeff]|\u034f)+/g, ' ').trim();
