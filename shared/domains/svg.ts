// SVG Tiny Portable/Secure (draft-svg-tiny-ps-abrotman) as BIMI (draft-brand-indicators-for-message-
// identification) asks for its logos: pure, the verdict is a value naming the one rule that failed.
// A mailbox provider renders this file next to a message, so everything that could run, fetch or point
// elsewhere is refused, and the file is also served with a CSP of `default-src 'none'` (belt and braces).
import { XMLParser, XMLValidator } from 'fast-xml-parser';

/** BIMI: "The SVG document SHOULD be no larger than 32 kilobytes"; validators and providers refuse more. */
export const MAX_SVG_BYTES = 32 * 1024;

export type SvgRule =
  | 'too_large'
  | 'not_xml'
  | 'doctype'
  | 'processing_instruction'
  | 'encoding'
  | 'root'
  | 'namespace'
  | 'version'
  | 'base_profile'
  | 'title'
  | 'view_box'
  | 'not_square'
  | 'root_position'
  | 'script'
  | 'event_attribute'
  | 'foreign_object'
  | 'image'
  | 'animation'
  | 'multimedia'
  | 'external_reference'
  | 'data_uri'
  | 'style_import';

export type SvgVerdict = { ok: true; bytes: number } | { ok: false; rule: SvgRule; message: string };

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Elements Tiny PS leaves out of SVG Tiny 1.2, with the rule each breaks (matched on the local name). */
const FORBIDDEN: Record<string, { rule: SvgRule; why: string }> = {
  script: { rule: 'script', why: 'scripts are not allowed' },
  handler: { rule: 'script', why: 'scripts are not allowed' },
  listener: { rule: 'script', why: 'event listeners are not allowed' },
  foreignobject: { rule: 'foreign_object', why: 'foreign content (HTML inside SVG) is not allowed' },
  image: { rule: 'image', why: 'embedded or linked raster images are not allowed' },
  animation: { rule: 'multimedia', why: 'embedded documents are not allowed' },
  audio: { rule: 'multimedia', why: 'multimedia is not allowed' },
  video: { rule: 'multimedia', why: 'multimedia is not allowed' },
  iframe: { rule: 'foreign_object', why: 'foreign content is not allowed' },
  embed: { rule: 'foreign_object', why: 'foreign content is not allowed' },
  object: { rule: 'foreign_object', why: 'foreign content is not allowed' },
  prefetch: { rule: 'external_reference', why: 'fetching other resources is not allowed' },
  animate: { rule: 'animation', why: 'animation is not allowed' },
  animatecolor: { rule: 'animation', why: 'animation is not allowed' },
  animatemotion: { rule: 'animation', why: 'animation is not allowed' },
  animatetransform: { rule: 'animation', why: 'animation is not allowed' },
  set: { rule: 'animation', why: 'animation is not allowed' },
  discard: { rule: 'animation', why: 'animation is not allowed' },
};

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  // Values stay as written; decodeRefs() below decodes them exactly once, so an encoded `&#104;ttp:` is seen
  // as the `http:` a renderer would see.
  processEntities: false,
  htmlEntities: false,
  parseAttributeValue: false,
  parseTagValue: false,
  trimValues: false,
  cdataPropName: '#cdata',
  commentPropName: '#comment',
});

type Node = Record<string, unknown> & { ':@'?: Record<string, string> };

const fail = (rule: SvgRule, message: string): SvgVerdict => ({ ok: false, rule, message });
const localName = (name: string) => name.slice(name.indexOf(':') + 1);
const nameOf = (node: Node) => Object.keys(node).find((k) => k !== ':@') ?? '';
const childrenOf = (node: Node) => (node[nameOf(node)] as Node[] | undefined) ?? [];
const textOf = (nodes: Node[]): string =>
  nodes
    .map((n) => (typeof n['#text'] === 'string' ? n['#text'] : nameOf(n) === '#cdata' ? textOf(childrenOf(n)) : ''))
    .join('');

const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** XML 1.0 §4.1/§4.6: character references and the five predefined entities; null for any other `&`. */
function decodeRefs(value: string): string | null {
  let ok = true;
  const out = value.replace(/&([^;&]*)(;?)/g, (whole, ref: string, semi: string) => {
    const hex = /^#x([0-9a-f]{1,6})$/i.exec(ref);
    const dec = /^#([0-9]{1,7})$/.exec(ref);
    const code = hex ? parseInt(hex[1], 16) : dec ? parseInt(dec[1], 10) : undefined;
    if (semi && code !== undefined && code > 0 && code <= 0x10ffff) return String.fromCodePoint(code);
    if (semi && Object.hasOwn(NAMED, ref)) return NAMED[ref];
    ok = false;
    return whole;
  });
  return ok ? out : null;
}

/** Schemes a renderer would fetch or run; a namespace name (xmlns) is only a name and is not looked at. */
const URL_SCHEME = /(?:^|[^a-z0-9+.-])(https?|data|javascript|vbscript|file|ftp|blob|wss?):/i;

/** Every `url(...)` must point inside the document (`url(#gradient)`); anything else is fetched. */
function outsideUrl(text: string): string | null {
  for (const m of text.matchAll(/url\(\s*(['"]?)([^'")]*)\1\s*\)/gi)) {
    if (!m[2].trim().startsWith('#')) return m[0];
  }
  return null;
}

function checkUrls(text: string, where: string): SvgVerdict | null {
  const scheme = URL_SCHEME.exec(text);
  if (scheme) {
    return scheme[1].toLowerCase() === 'data'
      ? fail('data_uri', `${where} holds a data: URI; embedded files are not allowed.`)
      : fail(
          'external_reference',
          `${where} refers to a ${scheme[1].toLowerCase()}: URL; external references are not allowed.`,
        );
  }
  const url = outsideUrl(text);
  if (url)
    return fail(
      'external_reference',
      `${where} has ${url}, which points outside the document; only url(#id) is allowed.`,
    );
  return null;
}

/** CSS in a <style> element or a style attribute (when the file carries any). */
function checkCss(css: string, where: string): SvgVerdict | null {
  if (/@import/i.test(css))
    return fail('style_import', `${where} uses @import; style sheets from elsewhere are not allowed.`);
  if (/@font-face/i.test(css))
    return fail('external_reference', `${where} declares @font-face; web fonts are not allowed.`);
  // A CSS escape can spell `url(` or a scheme without writing it (`\75 rl(`): none is needed in a logo.
  if (css.includes('\\'))
    return fail('external_reference', `${where} contains a CSS escape (\\); escapes are not allowed.`);
  return checkUrls(css, where);
}

function checkAttributes(element: string, attrs: Record<string, string>): SvgVerdict | null {
  for (const [name, raw] of Object.entries(attrs)) {
    const local = localName(name).toLowerCase();
    const where = `The ${name} attribute of <${element}>`;
    const value = decodeRefs(raw);
    if (value === null) return fail('not_xml', `${where} uses an undefined entity or a malformed character reference.`);
    if (name === 'xmlns' || name.startsWith('xmlns:')) continue;
    if (local.startsWith('on'))
      return fail('event_attribute', `<${element}> has the event attribute ${name}; event handlers are not allowed.`);
    if (local === 'href' && !value.trim().startsWith('#')) {
      if (/^\s*data:/i.test(value)) return fail('data_uri', `${where} is a data: URI; embedded files are not allowed.`);
      return fail(
        'external_reference',
        `${where} points to "${value.slice(0, 80)}"; only references inside the document (#id) are allowed.`,
      );
    }
    const problem = local === 'style' ? checkCss(value, where) : checkUrls(value, where);
    if (problem) return problem;
  }
  return null;
}

function numbers(value: string | undefined): number[] | null {
  if (value === undefined) return null;
  const parts = value
    .trim()
    .split(/[\s,]+/)
    .map(Number);
  return parts.every(Number.isFinite) ? parts : null;
}

function checkRoot(root: Node): SvgVerdict | null {
  const name = nameOf(root);
  const attrs = root[':@'] ?? {};
  if (name !== 'svg') return fail('root', `The root element is <${name}>; it must be <svg>.`);
  if (attrs.xmlns !== SVG_NS) return fail('namespace', `The <svg> element must declare xmlns="${SVG_NS}".`);
  if (attrs.version !== '1.2')
    return fail(
      'version',
      `The <svg> element must carry version="1.2" (SVG Tiny 1.2)${attrs.version ? `, not "${attrs.version}"` : ''}.`,
    );
  if (attrs.baseProfile !== 'tiny-ps')
    return fail(
      'base_profile',
      `The <svg> element must carry baseProfile="tiny-ps"${attrs.baseProfile ? `, not "${attrs.baseProfile}"` : ''}.`,
    );
  if ('x' in attrs || 'y' in attrs)
    return fail('root_position', 'The <svg> element must not carry x= or y= attributes.');
  const box = numbers(attrs.viewBox);
  if (!box || box.length !== 4 || box[2] <= 0 || box[3] <= 0) {
    return fail('view_box', 'The <svg> element must have a viewBox of four numbers with a positive width and height.');
  }
  if (box[2] !== box[3])
    return fail('not_square', `The logo must be square: the viewBox is ${box[2]} wide and ${box[3]} high.`);
  const size = (v: string | undefined) => (v === undefined ? undefined : /^([\d.]+)(px|%|)$/.exec(v.trim()));
  const [w, h] = [size(attrs.width), size(attrs.height)];
  if (attrs.width !== undefined && attrs.height !== undefined) {
    const same =
      w && h
        ? Number(w[1]) === Number(h[1]) && (w[2] || 'px') === (h[2] || 'px')
        : attrs.width.trim() === attrs.height.trim();
    if (!same)
      return fail('not_square', `The logo must be square: width="${attrs.width}" and height="${attrs.height}" differ.`);
  }
  const title = childrenOf(root).find((c) => nameOf(c) === 'title');
  if (!title || !textOf(childrenOf(title)).trim())
    return fail('title', 'The <svg> element must have a <title> child naming the brand.');
  return null;
}

/** Walks every element without recursion (a 32 KB file can nest thousands deep). */
function checkTree(root: Node): SvgVerdict | null {
  const stack: Node[] = [root];
  while (stack.length) {
    const node = stack.pop() as Node;
    const name = nameOf(node);
    if (name === '#comment' || name === '#cdata') continue; // CDATA is read with its parent (a <style>'s CSS)
    if (name === '#text') {
      if (decodeRefs(String(node['#text'])) === null)
        return fail('not_xml', 'The text of the file uses an undefined entity or a malformed character reference.');
      continue;
    }
    if (name.startsWith('?'))
      return fail('processing_instruction', `The processing instruction <${name}> is not allowed.`);
    const element = localName(name).toLowerCase();
    const forbidden = Object.hasOwn(FORBIDDEN, element) ? FORBIDDEN[element] : undefined;
    if (forbidden) return fail(forbidden.rule, `The file contains a <${name}> element: ${forbidden.why}.`);
    const problem = checkAttributes(name, node[':@'] ?? {});
    if (problem) return problem;
    if (localName(name) === 'style') {
      const css = decodeRefs(textOf(childrenOf(node)));
      const cssProblem =
        css === null
          ? fail('not_xml', 'The <style> element uses an undefined entity.')
          : checkCss(css, 'The <style> element');
      if (cssProblem) return cssProblem;
    }
    for (const child of childrenOf(node)) stack.push(child);
  }
  return null;
}

export function checkTinyPs(svg: string): SvgVerdict {
  const bytes = Buffer.byteLength(svg, 'utf8');
  if (bytes > MAX_SVG_BYTES)
    return fail('too_large', `The SVG is ${bytes} bytes; a BIMI logo may be at most ${MAX_SVG_BYTES} bytes.`);
  // Before parsing: a DTD is how entity expansion (billion laughs) and external entities (XXE) get in.
  if (/<!DOCTYPE|<!ENTITY/i.test(svg))
    return fail('doctype', 'The file has a DOCTYPE or an entity declaration; neither is allowed.');
  const valid = XMLValidator.validate(svg);
  if (valid !== true)
    return fail(
      'not_xml',
      `The file is not well-formed XML: ${valid.err.msg} (line ${valid.err.line}, column ${valid.err.col}).`,
    );
  let top: Node[];
  try {
    top = parser.parse(svg) as Node[];
  } catch (err) {
    // The validator passed it, the parser refused it (it refuses names such as __proto__).
    return fail('not_xml', `The file could not be parsed: ${(err as Error).message}`);
  }
  const elements: Node[] = [];
  for (const node of top) {
    const name = nameOf(node);
    if (name === '?xml') {
      const encoding = node[':@']?.encoding;
      if (encoding && !/^utf-?8$/i.test(encoding))
        return fail('encoding', `The XML declaration names encoding "${encoding}"; the file must be UTF-8.`);
    } else if (name.startsWith('?')) {
      return fail('processing_instruction', `The processing instruction <${name}> is not allowed.`);
    } else if (name === '#text') {
      if (String(node['#text']).trim()) return fail('not_xml', 'The file has text outside its root element.');
    } else if (name !== '#comment') {
      elements.push(node);
    }
  }
  if (elements.length !== 1)
    return fail('not_xml', `The file must have exactly one root element; it has ${elements.length}.`);
  return checkRoot(elements[0]) ?? checkTree(elements[0]) ?? { ok: true, bytes };
}
