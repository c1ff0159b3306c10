// The template page's own panels: its details (name, alias, subject, sender, reply-to) and the HTML mode of a template
// written as HTML.
import { TextInput } from '../../editor/fields';
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
        <label className="field">
          <span>HTML body</span>
          <textarea
            name="html"
            className="code"
            rows={16}
            spellCheck={false}
            value={draft.html}
            onChange={(e) => set({ ...draft, html: e.target.value })}
          />
        </label>
        <label className="field">
          <span>Text part</span>
          <textarea
            name="text"
            className="code"
            rows={6}
            value={draft.text}
            placeholder="Empty: made from the HTML at each send"
            onChange={(e) => set({ ...draft, text: e.target.value })}
          />
        </label>
      </fieldset>
    </section>
  );
}
