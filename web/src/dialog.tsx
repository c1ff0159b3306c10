// A modal dialog (the native <dialog> opened with showModal: the rest of the page is inert). Tab and Shift+Tab stay
// inside it, Escape closes it, and on closing the focus goes back where it was when it opened.
import { useCallback, useEffect, useId, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import './dialog.css';

const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea, [tabindex]';

/**
 * The last element focused outside a dialog: where the focus goes back when the one focused at opening was lost (a
 * submit button disabled while its request ran leaves the focus on the body).
 */
let lastFocus: HTMLElement | null = null;
document.addEventListener('focusin', (e) => {
  const el = e.target as HTMLElement;
  if (el !== document.body && !el.closest('dialog')) lastFocus = el;
});

export function Dialog(props: { title: string; onClose: () => void; children: ReactNode; id?: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const { onClose } = props;
  useEffect(() => {
    const dialog = ref.current!;
    const active = document.activeElement as HTMLElement | null;
    const before = active && active !== document.body ? active : lastFocus;
    if (!dialog.open) dialog.showModal();
    const first = dialog.querySelector<HTMLElement>('[autofocus], ' + FOCUSABLE);
    first?.focus();
    return () => {
      if (dialog.open) dialog.close();
      // Back to the button that opened it, if it is still on the page.
      if (before?.isConnected) before.focus();
    };
  }, []);
  function trap(e: KeyboardEvent<HTMLDialogElement>) {
    if (e.key !== 'Tab') return;
    const items = [...ref.current!.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => el.tabIndex >= 0);
    if (items.length === 0) return;
    const [first, last] = [items[0], items[items.length - 1]];
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    }
  }
  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={titleId}
      id={props.id}
      onKeyDown={trap}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
    </dialog>
  );
}

/** "Are you sure?": the question, a confirm button (danger) and Cancel; busy while the action runs. */
export function Confirm(props: {
  title: string;
  children: ReactNode;
  action: string;
  busy?: boolean;
  onConfirm: () => void;
  onClose: () => void;
}) {
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      {props.children}
      <div className="actions">
        <button type="button" className="secondary" onClick={props.onClose}>
          Cancel
        </button>
        <button type="button" className="danger-solid" disabled={props.busy} onClick={props.onConfirm}>
          {props.busy ? 'Working…' : props.action}
        </button>
      </div>
    </Dialog>
  );
}

type Question = { title: string; action: string; body?: string; answer: (yes: boolean) => void };

/**
 * "Are you sure?" asked in place of window.confirm: `await ask(title, action, body)` opens a Confirm and resolves true
 * on its action, false on Cancel or Escape; the page renders `dialog` where the question should appear.
 */
export function useConfirm() {
  const [question, setQuestion] = useState<Question | null>(null);
  const ask = useCallback(
    (title: string, action: string, body?: string) =>
      new Promise<boolean>((resolve) => setQuestion({ title, action, body, answer: resolve })),
    [],
  );
  const close = (yes: boolean) => {
    question?.answer(yes);
    setQuestion(null);
  };
  const dialog = question ? (
    <Confirm title={question.title} action={question.action} onConfirm={() => close(true)} onClose={() => close(false)}>
      {question.body ? <p>{question.body}</p> : null}
    </Confirm>
  ) : null;
  return { ask, dialog };
}
