// Sample values for the preview (the `values` of POST /template-previews): what a send might give, per declared
// variable, typed as text and read by the variable's type as fallbacks are. They are the page's, never saved.
import { useId } from 'react';
import { readValue, type VariableDraft } from './variables';

export function sampleValues(variables: VariableDraft[], samples: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const v of variables) {
    const s = samples[v.key];
    if (v.key && s !== undefined && s !== '') out[v.key] = readValue(v.type, s);
  }
  return out;
}

export function SampleValues(p: {
  variables: VariableDraft[];
  samples: Record<string, string>;
  set: (samples: Record<string, string>) => void;
}) {
  const id = useId();
  const keys = p.variables.filter((v) => v.key);
  return (
    <details className="samples">
      <summary>Sample values</summary>
      {keys.length === 0 ? <p className="hint">No variables declared.</p> : null}
      {keys.map((v, i) => (
        <div className="field" key={`${v.key}-${i}`}>
          <label htmlFor={`${id}-${i}`}>
            <span>
              Sample {v.key} <small className="hint">({v.type})</small>
            </span>
          </label>
          <input
            id={`${id}-${i}`}
            value={p.samples[v.key] ?? ''}
            placeholder={v.fallback ? `fallback: ${v.fallback}` : 'no fallback'}
            onChange={(e) => p.set({ ...p.samples, [v.key]: e.target.value })}
          />
        </div>
      ))}
    </details>
  );
}
