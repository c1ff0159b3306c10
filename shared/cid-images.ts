// An email's HTML made readable in a page whose policy allows inline images only: its `cid:` references (RFC 2392)
// to its own image parts become `data:` URIs. Only image types a browser shows inert in an <img>, each URI's type one
// of them (never the part's own text), and at most MAX_INLINED_BYTES in all: an image past that, or one whose part
// is missing, keeps its `cid:` and shows as missing. The HTML the api answers keeps `cid:`, as sent, unless a
// received email is asked for with `html_format=data_uri` (Resend's SDK option).
import type { AttachmentRow } from './attachment-rows.ts';
import type { BlobStore } from './blobs.ts';

export const MAX_INLINED_BYTES = 10 * 1024 * 1024;

const IMAGE_TYPES = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
  'image/svg+xml',
]);
/** A `cid:` URL in an attribute or a CSS url(): up to a quote, a space, an angle bracket or a closing parenthesis. */
const CID_REF = /\bcid:([^\s"'<>)]+)/gi;

const imageType = (row: AttachmentRow) => {
  const type = row.content_type.split(';')[0].trim().toLowerCase();
  return IMAGE_TYPES.has(type) ? type : undefined;
};

const decoded = (ref: string) => {
  try {
    return decodeURIComponent(ref);
  } catch {
    return ref;
  }
};

/** The HTML with each `cid:` reference to one of `parts`' images replaced by the image as a `data:` URI. */
export async function inlineCidImages(html: string, parts: AttachmentRow[], blobs: BlobStore): Promise<string> {
  // Content-IDs compare exactly, without the angle brackets a header writes them in (a sender may give them so); a
  // reference written in another case finds its part too (mailers differ).
  const byId = new Map<string, AttachmentRow>();
  for (const part of parts) {
    if (!part.content_id || !imageType(part)) continue;
    const bare = part.content_id.replace(/^<(.*)>$/, '$1');
    for (const id of [bare, bare.toLowerCase()]) if (!byId.has(id)) byId.set(id, part);
  }
  if (!byId.size) return html;
  const partOf = (ref: string) => byId.get(decoded(ref)) ?? byId.get(decoded(ref).toLowerCase());
  const uris = new Map<string, string>();
  let budget = MAX_INLINED_BYTES;
  for (const [, ref] of html.matchAll(CID_REF)) {
    const part = partOf(ref);
    if (!part || uris.has(part.id) || part.size > budget) continue;
    const bytes = await blobs.get(part.blob_key);
    if (!bytes || bytes.length > budget) continue;
    budget -= bytes.length;
    uris.set(part.id, `data:${imageType(part)};base64,${bytes.toString('base64')}`);
  }
  return html.replace(CID_REF, (whole, ref: string) => {
    const part = partOf(ref);
    return (part && uris.get(part.id)) ?? whole;
  });
}
