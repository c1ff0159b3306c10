// A template's draft as the page edits it, and the api bodies made from it: the update (save draft) and the preview.
// Empty optional fields are sent as null (the api clears them); the page's draft is replaced by the api's only after
// a save succeeded, so a refused save loses nothing.
import type { Schemas } from '../../api/client';
import type { BlockDocument } from '../../editor/model';
import { fromApi, toApi, type VariableDraft } from '../../editor/variables';
import type { PreviewRequest } from '../../editor/preview';
import { draftStash, sameDraft } from '../../stash';

export interface Draft {
  name: string;
  alias: string;
  subject: string;
  from: string;
  replyTo: string;
  html: string;
  text: string;
  document: BlockDocument | null;
  variables: VariableDraft[];
}

export function fromTemplate(t: Schemas['Template']): Draft {
  return {
    name: t.name,
    alias: t.alias ?? '',
    subject: t.subject ?? '',
    from: t.from ?? '',
    replyTo: (t.reply_to ?? []).join(', '),
    html: t.html,
    text: t.text ?? '',
    document: t.document,
    variables: t.variables.map(fromApi),
  };
}

const orNull = (s: string) => (s.trim() === '' ? null : s);

function content(d: Draft) {
  const replyTo = d.replyTo
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    subject: orNull(d.subject),
    from: orNull(d.from),
    reply_to: replyTo.length ? replyTo : null,
    variables: toApi(d.variables),
    ...(d.document ? { document: d.document } : { html: d.html, text: orNull(d.text) }),
  };
}

export function updateBody(d: Draft): Schemas['UpdateTemplateRequest'] {
  return { name: d.name, alias: orNull(d.alias), ...content(d) };
}

export function previewBody(d: Draft): PreviewRequest {
  return { ...content(d), list_unsubscribe: false };
}

export { sameDraft };

/** Edits kept across a sign-in (web/src/stash.ts). */
const drafts = draftStash<Draft>('template-draft');
export const stashDraft = drafts.stash;
export const takeStash = drafts.take;
