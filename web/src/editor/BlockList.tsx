// A list of blocks (the document's, or a column's): each block a row that opens its fields, with move up/down and
// delete; a block is added at the end. Keyboard: Tab to a block, Enter opens it, Alt+ArrowUp / Alt+ArrowDown move it
// (focus stays on it), and a polite live region says where it went.
import { useState, type KeyboardEvent } from 'react';
import { BlockForm } from './BlockForm';
import {
  addBlock,
  BLOCK_KINDS,
  kindLabel,
  listOf,
  moveBlock,
  newBlock,
  removeBlock,
  replaceBlock,
  summary,
  type AnyBlock,
  type BlockDocument,
  type BlockType,
  type ListRef,
} from './model';

export interface ListProps {
  doc: BlockDocument;
  list: ListRef;
  selected: string | null;
  select: (id: string | null) => void;
  change: (doc: BlockDocument) => void;
  /** Says a move or a deletion for screen readers. */
  announce: (message: string) => void;
  readOnly: boolean;
}

/** Focuses block `id`'s row once React drew it. */
export function focusBlock(id: string, scroll = false) {
  requestAnimationFrame(() => {
    const el = document.querySelector<HTMLElement>(`[data-block-select="${CSS.escape(id)}"]`);
    if (!el) return;
    if (scroll) el.scrollIntoView({ block: 'center' });
    el.focus({ preventScroll: scroll });
  });
}

export function BlockList(props: ListProps) {
  const { doc, list, readOnly } = props;
  const blocks = listOf(doc, list);
  return (
    <>
      {blocks.length === 0 ? <p className="hint">No blocks here yet.</p> : null}
      <ol className="blocks">
        {blocks.map((b, i) => (
          <BlockItem key={b.id} {...props} block={b} index={i} count={blocks.length} />
        ))}
      </ol>
      {readOnly ? null : <AddBlock {...props} />}
    </>
  );
}

function BlockItem(p: ListProps & { block: AnyBlock; index: number; count: number }) {
  const { block, index, count, doc, readOnly } = p;
  // A columns block stays open while one of its own blocks is selected (that block's fields are inside it).
  const open =
    p.selected === block.id ||
    (block.type === 'columns' && block.columns.some((c) => c.blocks.some((x) => x.id === p.selected)));
  const name = `${kindLabel(block.type)} ${block.id}`;
  const move = (delta: -1 | 1) => {
    const to = index + delta;
    if (to < 0 || to >= count) return;
    p.change(moveBlock(doc, block.id, delta));
    p.announce(`${name} moved to position ${to + 1} of ${count}.`);
    focusBlock(block.id);
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (readOnly || !e.altKey || (e.key !== 'ArrowUp' && e.key !== 'ArrowDown')) return;
    e.preventDefault();
    move(e.key === 'ArrowUp' ? -1 : 1);
  };
  return (
    <li className={open ? 'block open' : 'block'} data-block={block.id}>
      <div className="block-head" onKeyDown={onKeyDown}>
        <button
          type="button"
          className="block-select"
          data-block-select={block.id}
          aria-expanded={open}
          aria-keyshortcuts={readOnly ? undefined : 'Alt+ArrowUp Alt+ArrowDown'}
          onClick={() => p.select(open ? null : block.id)}
        >
          <span className="kind">{kindLabel(block.type)}</span>
          <span className="summary">{summary(block)}</span>
          <span className="visually-hidden"> ({block.id})</span>
        </button>
        {readOnly ? null : (
          <span className="block-actions">
            <button type="button" className="small" aria-label={`Move ${name} up`} onClick={() => move(-1)}>
              ↑
            </button>
            <button type="button" className="small" aria-label={`Move ${name} down`} onClick={() => move(1)}>
              ↓
            </button>
            <button
              type="button"
              className="small danger"
              aria-label={`Delete ${name}`}
              onClick={() => {
                p.change(removeBlock(doc, block.id));
                p.select(null);
                p.announce(`${name} deleted.`);
              }}
            >
              ✕
            </button>
          </span>
        )}
      </div>
      {open ? (
        <div className="block-form" role="group" aria-label={`The fields of ${name}`}>
          <fieldset disabled={readOnly}>
            <BlockForm block={block} set={(b) => p.change(replaceBlock(doc, b))} list={p} />
          </fieldset>
        </div>
      ) : null}
    </li>
  );
}

function AddBlock(p: ListProps) {
  const inColumn = p.list.parent !== null;
  const kinds = BLOCK_KINDS.filter((k) => !inColumn || k.type !== 'columns');
  const [type, setType] = useState<BlockType>('text');
  const where = inColumn ? `to column ${(p.list as { column: number }).column + 1}` : 'to the email';
  return (
    <div className="add-block">
      <label>
        <span className="visually-hidden">Kind of block to add {where}</span>
        <select value={type} onChange={(e) => setType(e.target.value as BlockType)}>
          {kinds.map((k) => (
            <option key={k.type} value={k.type}>
              {k.label}
            </option>
          ))}
        </select>
      </label>
      <button
        type="button"
        className="small"
        onClick={() => {
          const block = newBlock(p.doc, type);
          p.change(addBlock(p.doc, p.list, block));
          p.select(block.id);
          p.announce(`${kindLabel(type)} ${block.id} added.`);
          focusBlock(block.id);
        }}
      >
        Add {where}
      </button>
    </div>
  );
}
