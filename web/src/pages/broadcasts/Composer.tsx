// The composer of a draft broadcast: its details (sender, subject, preview text, segment and topic), its content in
// the block editor or as HTML, the merge tags, the live preview at phone and desktop widths, the pre-send checks
// (the preview's, then the send's own refusal, pointing at the block), save, send now or schedule, duplicate and
// delete. A viewer reads. A refused save or send shows the api's message and field paths and keeps every edit; a
// session that ended mid-edit brings up the sign-in-again dialog over the page, and the next save sends the edits.
import { useEffect, useState } from 'react';
import type { ApiError, Schemas } from '../../api/client';
import { can, useSession } from '../../session';
import { ErrorBox } from '../../ui';
import { focusBlock } from '../../editor/BlockList';
import { ChecksPanel } from '../../editor/checks';
import { PreviewPanel, usePreview, type PreviewState } from '../../editor/preview';
import { refusedChecks, useActions } from './actions';
import { emptyDraft, fromBroadcast, previewBody, sameDraft, takeStash } from './draft';
import type { Broadcast, Draft } from './draft';
import { ContentPanel, DetailsPanel, MergeTagsHelp } from './parts';
import { SendPanel } from './SendPanel';
import '../../editor/editor.css';

type Check = Schemas['EmailCheck'];

export function Composer({ initial, reload }: { initial: Broadcast | null; reload?: () => void }) {
  const { load: session } = useSession();
  const readOnly = !(session.state === 'ready' && can(session.data.role, 'member'));
  const [base, setBase] = useState(() => (initial ? fromBroadcast(initial) : emptyDraft()));
  const [stashed] = useState(() => takeStash(initial?.id ?? 'new'));
  const [draft, setDraft] = useState<Draft>(stashed ?? base);
  const [selected, select] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [said, setSaid] = useState('');
  const dirty = !initial || !sameDraft(draft, base);
  const preview = usePreview(previewBody(draft));
  // The send's own findings hold for the content it was refused with: an edit since brings back the preview's.
  const [refusedDraft, setRefusedDraft] = useState<Draft | null>(null);
  useEffect(() => setRefusedDraft(error ? draft : null), [error]);
  const checks = error && refusedDraft && sameDraft(refusedDraft, draft) ? refusedChecks(error) : undefined;
  useUnsavedWarning(dirty && !readOnly);

  const goTo = (blockId: string) => {
    select(blockId);
    focusBlock(blockId, true);
  };
  const { saveOnly, send, other, confirm } = useActions({
    initial,
    draft,
    dirty,
    reload,
    goTo,
    setBase,
    setError,
    setBusy,
    setSaid,
  });

  return (
    <>
      <TopBar
        name={initial ? initial.name || '(no name)' : 'New broadcast'}
        saved={!!initial}
        readOnly={readOnly}
        dirty={dirty}
        busy={busy}
        save={() => void saveOnly()}
        other={(what) => void other(what)}
      />
      <p role="status" aria-live="polite" className="said">
        {said || (stashed && dirty ? 'Your unsaved edits from before you signed in again are back: save them.' : '')}
      </p>
      {error ? (
        <div id="save-error">
          <ErrorBox error={error} />
          <p className="hint">
            {checks ? 'Nothing was sent; the checks below say why.' : 'Nothing was sent; your edits are still here.'}
          </p>
        </div>
      ) : null}
      <div className="editor-grid">
        <div className="editor-main">
          <DetailsPanel draft={draft} set={setDraft} readOnly={readOnly} />
          <ContentPanel draft={draft} set={setDraft} readOnly={readOnly} selected={selected} select={select} />
          <MergeTagsHelp />
          {readOnly ? null : (
            <SendPanel
              saved={!!initial}
              busy={busy}
              failing={checks?.filter((c) => c.status === 'fail').length ?? 0}
              send={send}
            />
          )}
        </div>
        <div className="editor-side">
          <PreviewPanel preview={preview} />
          <ChecksPanel preview={checks ? refusal(checks) : preview} goTo={goTo} />
        </div>
      </div>
      {confirm}
    </>
  );
}

function TopBar(p: {
  name: string;
  saved: boolean;
  readOnly: boolean;
  dirty: boolean;
  busy: string | null;
  save: () => void;
  other: (what: 'duplicate' | 'delete') => void;
}) {
  return (
    <div className="editor-top">
      <h1>{p.name}</h1>
      <span className="badge draft">draft</span>
      {p.readOnly ? (
        <span className="hint">Viewers read broadcasts; members compose and send them.</span>
      ) : (
        <span className="toolbar">
          {p.dirty ? <span className="unsaved">Unsaved changes</span> : null}
          <button type="button" className="secondary" disabled={!!p.busy || !p.dirty} onClick={p.save}>
            {p.busy === 'save' ? 'Saving…' : 'Save draft'}
          </button>
          {p.saved ? (
            <>
              <button type="button" className="secondary" disabled={!!p.busy} onClick={() => p.other('duplicate')}>
                Duplicate
              </button>
              <button type="button" className="danger" disabled={!!p.busy} onClick={() => p.other('delete')}>
                Delete draft
              </button>
            </>
          ) : null}
        </span>
      )}
    </div>
  );
}

/** The send's own findings (its 422's `details.checks`) shown by the checks panel in place of the preview's. */
function refusal(checks: Check[]): PreviewState {
  const data = {
    object: 'template_preview',
    id: '',
    subject: null,
    html: '',
    text: '',
    status: 'fail',
    checks,
  } as const;
  return { state: 'ready', data: { ...data, checks } };
}

/** The browser asks before leaving the page while edits are unsaved. */
function useUnsavedWarning(dirty: boolean) {
  useEffect(() => {
    if (!dirty) return;
    const warn = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [dirty]);
}
