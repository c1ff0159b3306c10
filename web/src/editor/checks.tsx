// The pre-send checks panel: the findings of the content as it is in the editor (from its preview), failures first.
// A finding about a block names it by `block_id`; its button selects that block and brings it into view.
import type { Schemas } from '../api/client';
import type { PreviewState } from './preview';

type Check = Schemas['EmailCheck'];
const ORDER = { fail: 0, warn: 1, pass: 2 } as const;

export function ChecksPanel({ preview, goTo }: { preview: PreviewState; goTo: (blockId: string) => void }) {
  const result = preview.state === 'ready' ? preview.data : preview.last;
  const findings = result ? [...result.checks].sort((a, b) => ORDER[a.status] - ORDER[b.status]) : [];
  const problems = findings.filter((c) => c.status !== 'pass');
  const passed = findings.filter((c) => c.status === 'pass');
  return (
    <section className="panel editor-panel" aria-labelledby="checks-title">
      <h2 id="checks-title">Pre-send checks</h2>
      {!result ? (
        <p className="loading">{preview.state === 'error' ? 'No checks until the content renders.' : 'Checking…'}</p>
      ) : problems.length === 0 ? (
        <p className="empty">Every check passes.</p>
      ) : (
        <ul className="checks">
          {problems.map((c, i) => (
            <Finding key={`${c.code}-${i}`} check={c} goTo={goTo} />
          ))}
        </ul>
      )}
      {passed.length ? (
        <details>
          <summary>{passed.length} checks pass</summary>
          <ul className="checks">
            {passed.map((c) => (
              <li key={c.code}>
                <span className="badge pass">pass</span> {c.title}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </section>
  );
}

function Finding({ check, goTo }: { check: Check; goTo: (blockId: string) => void }) {
  return (
    <li className={`check ${check.status}`}>
      <span className={`badge ${check.status === 'fail' ? 'failed' : 'warn'}`}>{check.status}</span>{' '}
      <strong>{check.title}</strong>: {check.message}
      {check.block_id ? (
        <>
          {' '}
          <button
            type="button"
            className="link"
            data-check-block={check.block_id}
            onClick={() => goTo(check.block_id!)}
          >
            Go to block {check.block_id}
          </button>
        </>
      ) : null}
    </li>
  );
}
