// A broadcast's draft as the composer edits it, and the api bodies made from it: create, update (save draft) and
// the live preview (POST /template-previews renders broadcast content as a template: its merge tags are declared as
// variables there, with sample values for the contact's fields). The page's draft is replaced by the api's only
// after a save succeeded, so a refused save loses nothing; a save refused because the session ended stashes it.
import type { Schemas } from '../../api/client';
import type { BlockDocument } from '../../editor/model';
import type { PreviewRequest } from '../../editor/preview';
import { draftStash, sameDraft } from '../../stash';

export type Broadcast = Schemas['Broadcast'];

export interface Draft {
  name: string;
  from: string;
  replyTo: string;
  subject: string;
  previewText: string;
  segmentId: string;
  topicId: string;
  html: string;
  text: string;
  document: BlockDocument | null;
}

export const STARTER_BROADCAST_HTML =
  '<h1>Hello {{{FIRST_NAME|there}}}</h1>\n<p>Write your message here.</p>\n' +
  '<p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>\n';

export function emptyDraft(): Draft {
  return {
    name: '',
    from: '',
    replyTo: '',
    subject: '',
    previewText: '',
    segmentId: '',
    topicId: '',
    html: STARTER_BROADCAST_HTML,
    text: '',
    document: null,
  };
}

export function fromBroadcast(b: Broadcast): Draft {
  return {
    name: b.name ?? '',
    from: b.from,
    replyTo: (b.reply_to ?? []).join(', '),
    subject: b.subject,
    previewText: b.preview_text ?? '',
    segmentId: b.segment_id ?? b.audience_id ?? '',
    topicId: b.topic_id ?? '',
    html: b.html ?? '',
    text: b.text ?? '',
    document: b.document ?? null,
  };
}

const orNull = (s: string) => (s.trim() === '' ? null : s);

/** The fields of a create or an update (an empty segment is left out: the api names it as missing). */
export function contentBody(d: Draft) {
  const replyTo = d.replyTo
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    name: orNull(d.name),
    from: d.from,
    reply_to: replyTo.length ? replyTo : null,
    subject: d.subject,
    preview_text: orNull(d.previewText),
    ...(d.segmentId ? { segment_id: d.segmentId } : {}),
    topic_id: orNull(d.topicId),
    // A document's html and text are rendered from it by the api; html given drops a document.
    ...(d.document ? { document: d.document } : { html: d.html, text: orNull(d.text) }),
  };
}

/** The contact's fields as the preview shows them (a recipient's own values at send). */
export const SAMPLE_VALUES: Record<string, string> = {
  FIRST_NAME: 'Ada',
  LAST_NAME: 'Lovelace',
  EMAIL: 'ada@example.com',
};

const TAG = /\{\{\{?\s*(?:contact\.)?([A-Za-z_][A-Za-z0-9_]*)\s*(?:\|[^}]*)?\}?\}\}/g;
// The names the template renderer keeps for itself (the contact's fields, the unsubscribe link): never declared.
const OWN = new Set([...Object.keys(SAMPLE_VALUES), 'UNSUBSCRIBE_URL', 'RESEND_UNSUBSCRIBE_URL']);

/** The merge tags' names in `texts` but the contact's fields and the unsubscribe URL. */
export function mergeTags(texts: string[]): string[] {
  const names = new Set<string>();
  for (const s of texts) for (const m of s.matchAll(TAG)) if (!OWN.has(m[1])) names.add(m[1]);
  return [...names];
}

// The template renderer keeps the contact's fields for broadcasts and knows neither the `UNSUBSCRIBE_URL` alias nor
// the `contact.` prefix: the preview prints the sample contact's fields and gets the forms it knows for the rest.
const forPreview = (s: string) =>
  s
    .replace(TAG, (tag: string, name: string) => SAMPLE_VALUES[name] ?? tag)
    .replace(/\{\{(\{?)\s*UNSUBSCRIBE_URL\s*(\}?)\}\}/g, '{{$1RESEND_UNSUBSCRIBE_URL$2}}')
    .replace(/\{\{(\{?)\s*contact\./g, '{{$1');

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function previewBody(d: Draft): PreviewRequest {
  // The preview text as a send writes it: a hidden preheader at the top of the html (the document's own, in blocks).
  const preheader = d.previewText.trim()
    ? `<div style="display:none;max-height:0;overflow:hidden">${escapeHtml(d.previewText)}</div>`
    : '';
  const doc = d.document && { ...d.document, preheader: d.previewText || d.document.preheader };
  const content = doc
    ? { document: JSON.parse(forPreview(JSON.stringify(doc))) as BlockDocument }
    : { html: preheader + forPreview(d.html), text: orNull(forPreview(d.text)) };
  const texts = [d.subject, d.html, d.text, JSON.stringify(d.document ?? '')];
  const keys = mergeTags(texts);
  return {
    subject: forPreview(d.subject) || null,
    ...content,
    variables: keys.map((key) => ({ key, type: 'string' as const, fallback_value: null })),
    // Every copy of a broadcast carries its recipient's one-click List-Unsubscribe (RFC 8058).
    list_unsubscribe: true,
  };
}

export { sameDraft };

/** Edits kept across a sign-in (web/src/stash.ts). */
const drafts = draftStash<Draft>('broadcast-draft');
export const stashDraft = drafts.stash;
export const takeStash = drafts.take;
