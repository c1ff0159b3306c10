// The template page's own panels: its details (name, alias, subject, sender, reply-to) and the HTML mode of a template
// written as HTML.
import { HtmlBodyFields, TextInput } from '../../editor/fields';
import type { Draft } from './draft';

interface Props {
  draft: Draft;
  set: (d: Draft) => void;
  readOnly: boolean;
}

export function DetailsPanel({ draft, set, readOnly }: Props) {
  return (
    <section className="panel editor-panel" aria-labelledby="details-title">
      <h2 id="details-title">Details</h2>
      <fieldset disabled={readOnly}>
        <TextInput label="Name" name="name" value={draft.name} onChange={(name = '') => set({ ...draft, name })} />
        <TextInput
          label="Alias"
          name="alias"
          value={draft.alias}
          hint="Another name a send may use instead of the id."
          onChange={(alias = '') => set({ ...draft, alias })}
        />
        <TextInput
          label="Subject"
          name="subject"
          value={draft.subject}
          onChange={(subject = '') => set({ ...draft, subject })}
        />
        <TextInput label="From" name="from" value={draft.from} onChange={(from = '') => set({ ...draft, from })} />
        <TextInput
          label="Reply-To"
          name="reply_to"
          value={draft.replyTo}
          hint="Addresses separated by commas."
          onChange={(replyTo = '') => set({ ...draft, replyTo })}
        />
      </fieldset>
    </section>
  );
}

export function HtmlPanel({ draft, set, readOnly }: Props) {
  return (
    <section className="panel editor-panel" aria-labelledby="html-title">
      <h2 id="html-title">HTML</h2>
      <fieldset disabled={readOnly}>
        <HtmlBodyFields
          html={draft.html}
          text={draft.text}
          onHtml={(html) => set({ ...draft, html })}
          onText={(text) => set({ ...draft, text })}
        />
      </fieldset>
    </section>
  );
}
