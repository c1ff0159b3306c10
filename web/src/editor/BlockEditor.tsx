// The visual block editor over a block document: the document's settings and its blocks (BlockList). Meant to be
// reused by anything that holds a block document (templates now, a broadcast's composer later): it holds no state
// but the live region, the owner keeps the document and which block is selected.
import { useState } from 'react';
import { BlockList } from './BlockList';
import { ColorInput, NumberInput, SelectInput, TextInput } from './fields';
import { TOP, type BlockDocument } from './model';

export interface BlockEditorProps {
  doc: BlockDocument;
  change: (doc: BlockDocument) => void;
  selected: string | null;
  select: (id: string | null) => void;
  readOnly: boolean;
  /** False: the owner asks for the preview text itself (a broadcast's `preview_text`), the layout panel does not. */
  preheader?: boolean;
}

export function BlockEditor(p: BlockEditorProps) {
  const [said, announce] = useState('');
  return (
    <>
      <section className="panel editor-panel" aria-labelledby="blocks-title">
        <h2 id="blocks-title">Blocks</h2>
        {p.readOnly ? null : (
          <p className="hint" id="blocks-keys">
            Open a block to edit it. With a block focused, Alt+↑ and Alt+↓ move it.
          </p>
        )}
        <BlockList
          doc={p.doc}
          list={TOP}
          selected={p.selected}
          select={p.select}
          change={p.change}
          announce={announce}
          readOnly={p.readOnly}
        />
        <p className="visually-hidden" role="status" aria-live="polite">
          {said}
        </p>
      </section>
      <DocumentSettings {...p} />
    </>
  );
}

function DocumentSettings({ doc, change, readOnly, preheader }: BlockEditorProps) {
  return (
    <details className="panel editor-panel">
      <summary>{preheader === false ? 'Layout' : 'Layout and preview text'}</summary>
      <fieldset disabled={readOnly}>
        {preheader === false ? null : (
          <TextInput
            label="Preview text (preheader)"
            value={doc.preheader}
            optional
            hint="Shown after the subject in most inboxes."
            onChange={(preheader) => change({ ...doc, preheader })}
          />
        )}
        <NumberInput
          label="Content width (px)"
          min={320}
          max={800}
          value={doc.width}
          onChange={(width) => change({ ...doc, width })}
        />
        <ColorInput
          label="Background color"
          value={doc.background_color}
          onChange={(background_color) => change({ ...doc, background_color })}
        />
        <ColorInput
          label="Content background color"
          value={doc.content_background_color}
          onChange={(content_background_color) => change({ ...doc, content_background_color })}
        />
        <SelectInput
          label="Font"
          value={doc.font_family}
          unset="Default (sans-serif)"
          options={[
            { value: 'sans-serif', label: 'Sans-serif' },
            { value: 'serif', label: 'Serif' },
            { value: 'monospace', label: 'Monospace' },
          ]}
          onChange={(font_family) => change({ ...doc, font_family })}
        />
      </fieldset>
    </details>
  );
}
