// The composer's panels: the details (name, sender, reply-to, subject, preview text, segment and topic), the content
// (the block editor of web/src/editor, or HTML) and the merge tags a broadcast knows.
import { useId, useState } from 'react';
import { BlockEditor } from '../../editor/BlockEditor';
import { HtmlBodyFields, TextInput } from '../../editor/fields';
import { starterDocument, type BlockDocument } from '../../editor/model';
import type { Load } from '../../ui';
import type { Draft } from './draft';
import { useNames } from './names';

interface Props {
  draft: Draft;
  set: (f: (d: Draft) => Draft) => void;
  readOnly: boolean;
}

export function DetailsPanel({ draft, set, readOnly }: Props) {
  const names = useNames();
  const field = (key: keyof Draft) => (v: string | undefined) => set((d) => ({ ...d, [key]: v ?? '' }));
  return (
    <section className="panel editor-panel" aria-labelledby="details-title">
      <h2 id="details-title">Details</h2>
      <fieldset disabled={readOnly}>
        <TextInput label="Name" name="name" value={draft.name} hint="For your team only." onChange={field('name')} />
        <TextInput
          label="From"
          name="from"
          value={draft.from}
          placeholder="News <news@example.com>"
          hint="An address at a verified domain of the team."
          onChange={field('from')}
        />
        <TextInput
          label="Reply-To"
          name="reply_to"
          value={draft.replyTo}
          hint="Addresses separated by commas."
          onChange={field('replyTo')}
        />
        <TextInput label="Subject" name="subject" value={draft.subject} onChange={field('subject')} />
        <TextInput
          label="Preview text"
          name="preview_text"
          value={draft.previewText}
          hint="Shown after the subject in most inboxes."
          onChange={field('previewText')}
        />
        <Picker
          label="Segment"
          name="segment_id"
          list={names.segmentList}
          value={draft.segmentId}
          none="Choose a segment"
          onChange={field('segmentId')}
        />
        <Picker
          label="Topic"
          name="topic_id"
          list={names.topicList}
          value={draft.topicId}
          none="No topic (everyone subscribed)"
          hint="Only the segment's contacts subscribed to the topic get it; its unsubscribe link opts out of the topic."
          onChange={field('topicId')}
        />
      </fieldset>
    </section>
  );
}

function Picker(p: {
  label: string;
  name: string;
  list: Load<{ id: string; name: string }[]>;
  value: string;
  none: string;
  hint?: string;
  onChange: (v: string) => void;
}) {
  const items = p.list.state === 'ready' ? p.list.data : [];
  const missing = p.value !== '' && p.list.state === 'ready' && !items.some((x) => x.id === p.value);
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>
        <span>{p.label}</span>
      </label>
      <select
        id={id}
        name={p.name}
        value={p.value}
        aria-describedby={p.hint ? `${id}-hint` : undefined}
        onChange={(e) => p.onChange(e.target.value)}
      >
        <option value="">{p.list.state === 'loading' ? 'Loading…' : p.none}</option>
        {missing ? <option value={p.value}>(deleted)</option> : null}
        {items.map((x) => (
          <option key={x.id} value={x.id}>
            {x.name}
          </option>
        ))}
      </select>
      {p.list.state === 'error' ? <small role="alert">{p.list.error.message}</small> : null}
      {p.hint ? (
        <small className="hint" id={`${id}-hint`}>
          {p.hint}
        </small>
      ) : null}
    </div>
  );
}

const starter = (): BlockDocument => {
  const doc = starterDocument();
  return JSON.parse(JSON.stringify(doc).replaceAll('{{{NAME|there}}}', '{{{FIRST_NAME|there}}}')) as BlockDocument;
};

export function ContentPanel(p: Props & { selected: string | null; select: (id: string | null) => void }) {
  const { draft, set, readOnly } = p;
  const [lastDoc, setLastDoc] = useState<BlockDocument | null>(null);
  const mode = draft.document ? 'blocks' : 'html';
  const choose = (m: 'blocks' | 'html') => {
    if (m === mode) return;
    if (m === 'html') {
      setLastDoc(draft.document);
      set((d) => ({ ...d, document: null }));
    } else set((d) => ({ ...d, document: lastDoc ?? starter() }));
  };
  return (
    <>
      <section className="panel editor-panel" aria-labelledby="content-title">
        <h2 id="content-title">Content</h2>
        <div className="segmented" role="group" aria-label="Edit the content with">
          {(['blocks', 'html'] as const).map((m) => (
            <button
              key={m}
              type="button"
              className="small"
              aria-pressed={mode === m}
              disabled={readOnly}
              onClick={() => choose(m)}
            >
              {m === 'blocks' ? 'Blocks (visual editor)' : 'HTML'}
            </button>
          ))}
        </div>
        {draft.document ? null : (
          <fieldset disabled={readOnly}>
            <HtmlBodyFields
              html={draft.html}
              text={draft.text}
              onHtml={(html) => set((d) => ({ ...d, html }))}
              onText={(text) => set((d) => ({ ...d, text }))}
            />
          </fieldset>
        )}
      </section>
      {draft.document ? (
        <BlockEditor
          doc={draft.document}
          change={(document) => set((d) => ({ ...d, document }))}
          selected={p.selected}
          select={p.select}
          readOnly={readOnly}
          preheader={false}
        />
      ) : null}
    </>
  );
}

const TAGS: [string, string][] = [
  ['{{{FIRST_NAME|there}}}', "The contact's first name, else “there”"],
  ['{{{LAST_NAME}}}', "The contact's last name"],
  ['{{{EMAIL}}}', "The contact's address"],
  ['{{{city|Berlin}}}', "A contact property by its key, else the property's fallback, else “Berlin”"],
  ['{{{RESEND_UNSUBSCRIBE_URL}}}', "The recipient's own unsubscribe link"],
];

export function MergeTagsHelp() {
  return (
    <details className="panel editor-panel merge-tags">
      <summary>Merge tags</summary>
      <p className="hint">
        Each recipient gets their own values, HTML-escaped. The preview shows a sample contact (Ada Lovelace); a tag
        naming nothing known fails the checks at send.
      </p>
      <dl>
        {TAGS.map(([tag, what]) => (
          <div key={tag}>
            <dt>
              <code>{tag}</code>
            </dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
    </details>
  );
}
