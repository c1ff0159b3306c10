// The live preview: the content as it is in the editor (saved or not) rendered by the api (POST /template-previews:
// at once when the page opens, then half a second after the last change) and shown in a sandboxed frame at a phone's
// width (390 px) or a desktop's (600 px). The frame opens the preview's own page (GET /template-previews/{id}), whose
// policy lets the email's inline styles apply; an `srcdoc` frame would inherit this page's strict policy and show the
// email unstyled. The frame has no script and an opaque origin (`sandbox` without allow-scripts or allow-same-origin).
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { api, asApiError, type ApiError, type Schemas } from '../api/client';
import { ErrorBox } from '../ui';

export type PreviewRequest = Schemas['TemplatePreviewRequest'];
export type PreviewResult = Schemas['TemplatePreview'];

export type PreviewState =
  | { state: 'loading'; last: PreviewResult | null }
  | { state: 'error'; error: ApiError; last: PreviewResult | null }
  | { state: 'ready'; data: PreviewResult };

const DELAY_MS = 500;

export function usePreview(body: PreviewRequest): PreviewState {
  const key = JSON.stringify(body);
  const [s, setS] = useState<PreviewState>({ state: 'loading', last: null });
  // The first rendering goes at once: the wait is for typing, and nobody has typed when the page opens.
  const first = useRef(true);
  useEffect(() => {
    let live = true;
    const delay = first.current ? 0 : DELAY_MS;
    first.current = false;
    setS((prev) => ({ state: 'loading', last: prev.state === 'ready' ? prev.data : prev.last }));
    const timer = setTimeout(() => {
      api
        .POST('/template-previews', { body: JSON.parse(key) as PreviewRequest })
        .then((r) => {
          if (!live) return;
          if (r.data && r.response.ok) setS({ state: 'ready', data: r.data });
          else setS((prev) => ({ state: 'error', error: asApiError(r.error, r.response.status), last: lastOf(prev) }));
        })
        .catch((e) => live && setS((prev) => ({ state: 'error', error: asApiError(e), last: lastOf(prev) })));
    }, delay);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [key]);
  return s;
}

const lastOf = (s: PreviewState) => (s.state === 'ready' ? s.data : s.last);

/** `children`: controls shown under the heading (the template page's sample values). */
export function PreviewPanel({ preview, children }: { preview: PreviewState; children?: ReactNode }) {
  // On a phone the phone's width first (the desktop one scrolls sideways there).
  const [width, setWidth] = useState<'desktop' | 'mobile'>(() => (window.innerWidth < 700 ? 'mobile' : 'desktop'));
  const shown = preview.state === 'ready' ? preview.data : preview.last;
  return (
    <section className="panel editor-panel preview-panel" aria-labelledby="preview-title">
      <div className="preview-head">
        <h2 id="preview-title">Preview</h2>
        <div className="segmented" role="group" aria-label="Preview width">
          {(['desktop', 'mobile'] as const).map((w) => (
            <button key={w} type="button" className="small" aria-pressed={width === w} onClick={() => setWidth(w)}>
              {w === 'desktop' ? 'Desktop (600 px)' : 'Mobile (390 px)'}
            </button>
          ))}
        </div>
      </div>
      {children}
      <p role="status" aria-live="polite" className="hint">
        {preview.state === 'loading' ? 'Rendering…' : preview.state === 'error' ? 'Not rendered.' : 'Up to date.'}
      </p>
      {preview.state === 'error' ? <ErrorBox error={preview.error} /> : null}
      {shown ? (
        <>
          <p className="preview-subject">
            <span className="hint">Subject: </span>
            {shown.subject ?? '(none)'}
          </p>
          <div className="frame-wrap" tabIndex={0} role="region" aria-label="The rendered email">
            <iframe
              className={`email-frame ${width}`}
              title={`The email at ${width === 'desktop' ? 'a desktop' : "a phone's"} width`}
              sandbox="allow-popups allow-popups-to-escape-sandbox"
              referrerPolicy="no-referrer"
              src={`/template-previews/${encodeURIComponent(shown.id)}`}
            />
          </div>
        </>
      ) : preview.state === 'loading' ? (
        <p className="loading">Rendering the preview…</p>
      ) : null}
    </section>
  );
}
