// Merge tags of a broadcast (Resend's form): `{{{NAME}}}` or `{{NAME}}`, with an inline fallback
// `{{{NAME|fallback}}}`. NAME is FIRST_NAME, LAST_NAME or EMAIL (the contact's fields), RESEND_UNSUBSCRIBE_URL (or
// UNSUBSCRIBE_URL: the recipient's own signed preference-page link), or a contact property's key (as declared,
// any case). A value that is missing or empty takes the inline fallback, else the property's fallback_value, else
// nothing. A name that is none of these prints its inline fallback, or nothing: the pre-send checks report it
// (`unresolved_variable`) before the send, so nobody receives a tag as written. In html every value is
// HTML-escaped, triple braces too (contact data is anyone's input: a form, an import).
// A template is split once per broadcast (`compileMerge`); rendering a copy is then a join of strings.
//
// Why not the templates' Handlebars engine (shared/templates/engine.ts, syntax.ts; issue #19's one maintained engine)?
// Where a broadcast uses the templates' language it does use that engine: a broadcast made from a template has the
// template's declared variables filled by it once, at create (from-template.ts). What is left, and what this file
// renders, is a flat substitution with no blocks, loops or helpers, whose rules the engine's path does not have:
// - names are resolved per team at send, not declared: FIRST_NAME, a property key in any case, `contact.company`;
//   Handlebars looks paths up case-sensitively and reads `contact.company` as a nested path, and syntax.ts refuses a
//   name that is not declared at write time, where an unknown name here is a send-time check that
//   `acknowledge_checks` may pass (and then prints its fallback or nothing);
// - a missing or empty value takes the inline fallback, else the property's `fallback_value`; the engine's `_v` takes
//   the inline fallback for a missing value only (an empty string prints empty) and knows no second fallback;
// - in html an inline fallback is escaped like a value (read back from the html's escaping first); the engine sends
//   a fallback out as written. In text, line breaks in a value become spaces; the engine does that in subjects only;
// - html that holds `{{` without being a merge tag (a pasted Mustache, Vue or Liquid snippet) is stored as given and,
//   once the send's `unresolved_variable` finding is acknowledged, goes out as written; through Handlebars it would be
//   a parse error at fan-out for broadcasts already stored, or a live `{{#each}}`. Keeping the current behaviour would
//   need this tag scanner in front of Handlebars anyway, to escape everything else.
// Bending the engine to these rules (a broadcast mode in `_v`, a name-rewriting walk over the AST, escaping every
// other `{{`) would put about as much hand-written code around it as this file holds, and change what stored broadcasts
// send. So the one-line grammar stays here (one regular expression, no nesting), tested through the broadcast tests
// (merge values, fallbacks, escaping, unknown names: broadcasts.test.ts, broadcasts-gate.test.ts).

export interface MergeContact {
  email: string;
  first_name: string | null;
  last_name: string | null;
  properties: Record<string, unknown>;
}

export interface MergeContext {
  /** The team's properties by lower-cased key: the declared key and its fallback. */
  properties: Map<string, { key: string; fallback: unknown }>;
}

type Piece = string | { name: string; fallback: string | null };

export interface CompiledMerge {
  pieces: Piece[];
}

const TAG = /\{\{(\{?)\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*(?:\|([^{}\r\n]*))?\}\}(\}?)/g;
export const UNSUBSCRIBE_NAMES = new Set(['RESEND_UNSUBSCRIBE_URL', 'UNSUBSCRIBE_URL']);
const CONTACT_FIELDS: Record<string, keyof MergeContact> = {
  FIRST_NAME: 'first_name',
  LAST_NAME: 'last_name',
  EMAIL: 'email',
};

/** Where the merge tags of `source` are, and what they name (`start`, `end`: offsets of each tag). */
export function mergeTags(source: string): { name: string; start: number; end: number }[] {
  const out = [];
  for (const m of source.matchAll(TAG))
    if (m[1].length === m[4].length) out.push({ name: m[2], start: m.index, end: m.index + m[0].length });
  return out;
}

export function compileMerge(source: string): CompiledMerge {
  const pieces: Piece[] = [];
  let last = 0;
  for (const m of source.matchAll(TAG)) {
    if (m[1].length !== m[4].length) continue; // braces that do not pair: left as written
    if (m.index > last) pieces.push(source.slice(last, m.index));
    pieces.push({ name: m[2], fallback: m[3] === undefined ? null : m[3].trim() });
    last = m.index + m[0].length;
  }
  if (last < source.length) pieces.push(source.slice(last));
  return { pieces };
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

const UNESCAPES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };
/** A fallback written in html as the html holds it (`Tom &amp; Jerry`), read back once so it is escaped once. */
const unescapeHtml = (s: string) => s.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => UNESCAPES[e]);

const present = (v: unknown) => v !== null && v !== undefined && v !== '';
const asText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** What NAME names: a contact field, the unsubscribe link, a property, or nothing known. */
export function resolveName(
  name: string,
  ctx: MergeContext,
): { kind: 'field'; field: keyof MergeContact } | { kind: 'unsubscribe' } | { kind: 'property'; key: string } | null {
  const upper = name.toUpperCase();
  if (UNSUBSCRIBE_NAMES.has(upper)) return { kind: 'unsubscribe' };
  if (CONTACT_FIELDS[upper]) return { kind: 'field', field: CONTACT_FIELDS[upper] };
  const property = ctx.properties.get(name.replace(/^contact\./i, '').toLowerCase());
  return property ? { kind: 'property', key: property.key } : null;
}

function valueOf(
  piece: { name: string; fallback: string | null },
  contact: MergeContact,
  unsubscribeUrl: string,
  ctx: MergeContext,
): string {
  const target = resolveName(piece.name, ctx);
  if (!target) return piece.fallback ?? '';
  if (target.kind === 'unsubscribe') return unsubscribeUrl;
  const value = target.kind === 'field' ? contact[target.field] : contact.properties[target.key];
  if (present(value)) return asText(value);
  if (piece.fallback !== null) return piece.fallback;
  const declared = target.kind === 'property' ? ctx.properties.get(target.key.toLowerCase())?.fallback : null;
  return present(declared) ? asText(declared) : '';
}

/** One recipient's copy of a part; `html` escapes every value. */
export function renderMerge(
  t: CompiledMerge,
  contact: MergeContact,
  unsubscribeUrl: string,
  ctx: MergeContext,
  html: boolean,
): string {
  let out = '';
  for (const p of t.pieces) {
    if (typeof p === 'string') out += p;
    else {
      const piece = html && p.fallback ? { name: p.name, fallback: unescapeHtml(p.fallback) } : p;
      const value = valueOf(piece, contact, unsubscribeUrl, ctx);
      out += html ? escapeHtml(value) : value.replace(/[\r\n]+/g, ' ');
    }
  }
  return out;
}

/** Names of tags that name nothing known and have no inline fallback: what the checks report. */
export function unresolvedNames(sources: (string | null)[], ctx: MergeContext): string[] {
  const names = new Set<string>();
  for (const s of sources)
    for (const p of s ? compileMerge(s).pieces : [])
      if (typeof p !== 'string' && p.fallback === null && !resolveName(p.name, ctx)) names.add(p.name);
  return [...names];
}

/** The html with `preview` as its hidden preheader (what inboxes show after the subject). */
export function withPreview(html: string, preview: string | null): string {
  if (!preview) return html;
  const esc = escapeHtml(preview);
  const div = `<div style="display:none;max-height:0;overflow:hidden;mso-hide:all">${esc}</div>`;
  const body = /<body[^>]*>/i.exec(html);
  return body ? html.slice(0, body.index + body[0].length) + div + html.slice(body.index + body[0].length) : div + html;
}
