// Labelled inputs bound to one field of a value: an empty optional field is left out (undefined), so the api applies
// its default, and a number that is not one is sent as typed for the api to refuse with its message.
import { useId, type ReactNode } from 'react';

interface Base {
  label: string;
  hint?: ReactNode;
}

export function TextInput(
  p: Base & {
    value: string | undefined;
    onChange: (v: string | undefined) => void;
    optional?: boolean;
    multiline?: boolean;
    type?: string;
    name?: string;
    placeholder?: string;
  },
) {
  const change = (v: string) => p.onChange(p.optional && v === '' ? undefined : v);
  const id = useId();
  const described = p.hint ? `${id}-hint` : undefined;
  return (
    <div className="field">
      <label htmlFor={id}>
        <span>{p.label}</span>
      </label>
      {p.multiline ? (
        <textarea
          id={id}
          name={p.name}
          value={p.value ?? ''}
          rows={4}
          aria-describedby={described}
          onChange={(e) => change(e.target.value)}
        />
      ) : (
        <input
          id={id}
          name={p.name}
          type={p.type ?? 'text'}
          value={p.value ?? ''}
          placeholder={p.placeholder}
          aria-describedby={described}
          onChange={(e) => change(e.target.value)}
        />
      )}
      {p.hint ? (
        <small className="hint" id={described}>
          {p.hint}
        </small>
      ) : null}
    </div>
  );
}

export function NumberInput(
  p: Omit<Base, 'hint'> & {
    value: number | undefined;
    onChange: (v: number | undefined) => void;
    min: number;
    max: number;
  },
) {
  return (
    <label className="field">
      <span>{p.label}</span>
      <input
        type="number"
        inputMode="numeric"
        min={p.min}
        max={p.max}
        value={p.value ?? ''}
        onChange={(e) => p.onChange(e.target.value === '' ? undefined : Number(e.target.value))}
      />
    </label>
  );
}

export function SelectInput<T extends string | number>(
  p: Base & {
    value: T | undefined;
    options: readonly { value: T; label: string }[];
    onChange: (v: T | undefined) => void;
    /** The label of "unset" (the api's default); absent: a value is required. */
    unset?: string;
  },
) {
  return (
    <label className="field">
      <span>{p.label}</span>
      <select
        value={p.value === undefined ? '' : String(p.value)}
        onChange={(e) => {
          const found = p.options.find((o) => String(o.value) === e.target.value);
          p.onChange(found?.value);
        }}
      >
        {p.unset !== undefined ? <option value="">{p.unset}</option> : null}
        {p.options.map((o) => (
          <option key={String(o.value)} value={String(o.value)}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}

export const ALIGN_OPTIONS = [
  { value: 'left', label: 'Left' },
  { value: 'center', label: 'Center' },
  { value: 'right', label: 'Right' },
] as const;

/** A #rgb/#rrggbb color as text (a native color picker cannot say "unset"). */
export function ColorInput(p: Base & { value: string | undefined; onChange: (v: string | undefined) => void }) {
  return <TextInput label={p.label} value={p.value} onChange={p.onChange} optional placeholder="#rrggbb" />;
}

/** An HTML body and its text part, as the template editor and the broadcast composer take them. */
export function HtmlBodyFields(p: {
  html: string;
  text: string;
  onHtml: (v: string) => void;
  onText: (v: string) => void;
}) {
  return (
    <>
      <label className="field">
        <span>HTML body</span>
        <textarea
          name="html"
          className="code"
          rows={16}
          spellCheck={false}
          value={p.html}
          onChange={(e) => p.onHtml(e.target.value)}
        />
      </label>
      <label className="field">
        <span>Text part</span>
        <textarea
          name="text"
          className="code"
          rows={6}
          value={p.text}
          placeholder="Empty: made from the HTML at each send"
          onChange={(e) => p.onText(e.target.value)}
        />
      </label>
    </>
  );
}
