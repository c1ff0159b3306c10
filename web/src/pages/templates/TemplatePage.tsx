// A template: its details, its body in the block editor (or the HTML mode), its variables, the live preview at phone
// and desktop widths, the pre-send checks pointing at the blocks, save draft and publish. Members and admins edit; a
// viewer reads (and previews). A refused save shows the api's message and field paths and keeps every edit.
import { useEffect, useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, asApiError, type ApiError, type Schemas } from '../../api/client';
import { can, useSession } from '../../session';
import { ErrorBox, Shown, useLoad } from '../../ui';
import { BlockEditor } from '../../editor/BlockEditor';
import { focusBlock } from '../../editor/BlockList';
import { ChecksPanel } from '../../editor/checks';
import { PreviewPanel, usePreview } from '../../editor/preview';
import { VariablesPanel } from '../../editor/variables';
import { SampleValues, sampleValues } from '../../editor/samples';
import { fromTemplate, previewBody, sameDraft, stashDraft, takeStash, updateBody, type Draft } from './draft';
import { DetailsPanel, HtmlPanel } from './parts';
import '../../editor/editor.css';

type Template = Schemas['Template'];

export function TemplatePage() {
  const { id = '' } = useParams();
  const [load] = useLoad(() => api.GET('/templates/{id_or_alias}', { params: { path: { id_or_alias: id } } }), [id]);
  return (
    <>
      <p>
        <Link to="/dashboard/templates">← Templates</Link>
      </p>
      <Shown load={load} what="the template">
        {(t) => <TemplateEditor key={t.id} initial={t} />}
      </Shown>
    </>
  );
}

const blockOf = (e: ApiError) => (e as { details?: { block_id?: unknown } }).details?.block_id;

function TemplateEditor({ initial }: { initial: Template }) {
  const { load: session } = useSession();
  const readOnly = !(session.state === 'ready' && can(session.data.role, 'member'));
  const [saved, setSaved] = useState(initial);
  const [base, setBase] = useState(() => fromTemplate(initial));
  const [stashed] = useState(() => takeStash(initial.id));
  const [draft, setDraft] = useState<Draft>(stashed ?? base);
  const [selected, select] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState<'save' | 'publish' | null>(null);
  const [said, setSaid] = useState('');
  const dirty = !sameDraft(draft, base);
  const [samples, setSamples] = useState<Record<string, string>>({});
  const preview = usePreview({ ...previewBody(draft), values: sampleValues(draft.variables, samples) });
  useUnsavedWarning(dirty);

  const goTo = (blockId: string) => {
    select(blockId);
    focusBlock(blockId, true);
  };
  const path = { params: { path: { id_or_alias: saved.id } } };
  async function refetch(message: string) {
    const t = await api.GET('/templates/{id_or_alias}', path);
    if (!t.data) throw asApiError(t.error, t.response.status);
    const d = fromTemplate(t.data);
    setSaved(t.data);
    setBase(d);
    setDraft(d);
    setSaid(message);
  }
  async function run(what: 'save' | 'publish') {
    setBusy(what);
    setError(null);
    setSaid('');
    try {
      if (what === 'save' || dirty) {
        const r = await api.PATCH('/templates/{id_or_alias}', { ...path, body: updateBody(draft) });
        if (!r.response.ok) throw asApiError(r.error, r.response.status);
      }
      if (what === 'publish') {
        const r = await api.POST('/templates/{id_or_alias}/publish', path);
        if (!r.response.ok) throw asApiError(r.error, r.response.status);
      }
      await refetch(what === 'save' ? 'Draft saved.' : 'Published: sends use this version now.');
    } catch (e) {
      const failed = asApiError(e);
      setError(failed);
      if (failed.statusCode === 401) stashDraft(saved.id, draft);
      const block = blockOf(failed);
      if (typeof block === 'string') goTo(block);
    } finally {
      setBusy(null);
    }
  }

  return (
    <>
      <TopBar saved={saved} readOnly={readOnly} dirty={dirty} busy={busy} run={(what) => void run(what)} />
      <p role="status" aria-live="polite" className="said">
        {said || (stashed && dirty ? 'Your unsaved edits from before you signed in again are back: save them.' : '')}
      </p>
      {error ? (
        <div id="save-error">
          <ErrorBox error={error} />
          <p className="hint">Nothing was saved; your edits are still here.</p>
        </div>
      ) : null}
      <div className="editor-grid">
        <div className="editor-main">
          <DetailsPanel draft={draft} set={setDraft} readOnly={readOnly} />
          {draft.document ? (
            <BlockEditor
              doc={draft.document}
              change={(document) => setDraft((d) => ({ ...d, document }))}
              selected={selected}
              select={select}
              readOnly={readOnly}
            />
          ) : (
            <HtmlPanel draft={draft} set={setDraft} readOnly={readOnly} />
          )}
          <VariablesPanel
            variables={draft.variables}
            change={(variables) => setDraft((d) => ({ ...d, variables }))}
            readOnly={readOnly}
          />
        </div>
        <div className="editor-side">
          <PreviewPanel preview={preview}>
            <SampleValues variables={draft.variables} samples={samples} set={setSamples} />
          </PreviewPanel>
          <ChecksPanel preview={preview} goTo={goTo} />
        </div>
      </div>
    </>
  );
}

function TopBar(p: {
  saved: Template;
  readOnly: boolean;
  dirty: boolean;
  busy: 'save' | 'publish' | null;
  run: (what: 'save' | 'publish') => void;
}) {
  const { saved, readOnly, dirty, busy, run } = p;
  return (
    <div className="editor-top">
      <h1>{saved.name}</h1>
      <span className={`badge ${saved.status}`}>{saved.status}</span>
      {saved.status === 'published' && saved.has_unpublished_versions ? (
        <span className="hint">The draft differs from the published version.</span>
      ) : null}
      {readOnly ? (
        <span className="hint">Viewers read templates; members edit them.</span>
      ) : (
        <span className="toolbar">
          {dirty ? <span className="unsaved">Unsaved changes</span> : null}
          <button type="button" className="secondary" disabled={!!busy || !dirty} onClick={() => run('save')}>
            {busy === 'save' ? 'Saving…' : 'Save draft'}
          </button>
          <button type="button" disabled={!!busy} onClick={() => run('publish')}>
            {busy === 'publish' ? 'Publishing…' : 'Publish'}
          </button>
        </span>
      )}
    </div>
  );
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
