// The variables panel: the declared variables (key, type, fallback), as the api takes them (`variables`). A fallback
// is typed as text and converted by the variable's type when sent; one that does not convert is sent as typed, and
// the api's refusal names its field (`variables.2.fallback_value`).
import type { Schemas } from '../api/client';

type VariableType = Schemas['TemplateVariable']['type'];
const TYPES: VariableType[] = ['string', 'number', 'boolean', 'object', 'list'];

export interface VariableDraft {
  key: string;
  type: VariableType;
  /** As typed; empty: no fallback. */
  fallback: string;
}

export function fromApi(v: Schemas['TemplateVariable']): VariableDraft {
  const f = v.fallback_value;
  return {
    key: v.key,
    type: v.type,
    fallback: f === null ? '' : typeof f === 'string' ? f : JSON.stringify(f),
  };
}

/** Text typed for a value of `type`: a string as typed, any other type as JSON (as typed when it is not JSON). */
export function readValue(type: VariableType, typed: string): unknown {
  if (type === 'string') return typed;
  try {
    return JSON.parse(typed);
  } catch {
    return typed;
  }
}

const fallbackValue = (v: VariableDraft): unknown => (v.fallback === '' ? null : readValue(v.type, v.fallback));

export const toApi = (vs: VariableDraft[]) =>
  vs.map((v) => ({ key: v.key, type: v.type, fallback_value: fallbackValue(v) })) as {
    key: string;
    type: VariableType;
    fallback_value?: string | number | boolean | Record<string, unknown> | unknown[] | null;
  }[];

export function VariablesPanel(p: {
  variables: VariableDraft[];
  change: (vs: VariableDraft[]) => void;
  readOnly: boolean;
}) {
  const set = (i: number, v: VariableDraft) => p.change(p.variables.map((x, j) => (j === i ? v : x)));
  return (
    <section className="panel editor-panel" aria-labelledby="variables-title">
      <h2 id="variables-title">Variables</h2>
      <p className="hint">
        Print one as <code>{'{{{KEY}}}'}</code>. A send gives its value; without one it gets the fallback.
      </p>
      {p.variables.length === 0 ? <p className="empty">No variables declared.</p> : null}
      <fieldset disabled={p.readOnly} className="variables">
        {p.variables.map((v, i) => (
          <div className="variable" key={i}>
            <label className="field">
              <span>Key</span>
              <input value={v.key} onChange={(e) => set(i, { ...v, key: e.target.value })} />
            </label>
            <label className="field">
              <span>Type</span>
              <select value={v.type} onChange={(e) => set(i, { ...v, type: e.target.value as VariableType })}>
                {TYPES.map((t) => (
                  <option key={t} value={t}>
                    {t}
                  </option>
                ))}
              </select>
            </label>
            <label className="field">
              <span>Fallback</span>
              <input
                value={v.fallback}
                placeholder={v.type === 'string' ? 'none' : 'none (JSON)'}
                onChange={(e) => set(i, { ...v, fallback: e.target.value })}
              />
            </label>
            {p.readOnly ? null : (
              <button
                type="button"
                className="small danger"
                aria-label={`Remove the variable ${v.key || i + 1}`}
                onClick={() => p.change(p.variables.filter((_, j) => j !== i))}
              >
                ✕
              </button>
            )}
          </div>
        ))}
      </fieldset>
      {p.readOnly ? null : (
        <button
          type="button"
          className="small"
          onClick={() => p.change([...p.variables, { key: '', type: 'string', fallback: '' }])}
        >
          Add a variable
        </button>
      )}
    </section>
  );
}
