// A form's submit: busy while the request runs, the api's Error shown under it when refused.
import { useState, type FormEvent, type ReactNode } from 'react';
import { asApiError, type ApiError } from './api/client';
import { ErrorBox, type Answer } from './ui';

export function useSubmit<T>(send: (form: FormData) => Promise<Answer<T>>, done: (data: T) => void) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    setBusy(true);
    setError(null);
    try {
      const r = await send(new FormData(form));
      if (r.data !== undefined && r.response.ok) {
        form.reset();
        done(r.data);
      } else setError(asApiError(r.error, r.response.status));
    } catch (err) {
      setError(asApiError(err));
    } finally {
      setBusy(false);
    }
  }
  return { busy, error, onSubmit };
}

export function Field(props: {
  label: string;
  name: string;
  type?: string;
  required?: boolean;
  autoComplete?: string;
  minLength?: number;
  defaultValue?: string;
  inputMode?: 'numeric' | 'text' | 'email';
}) {
  const { label, ...input } = props;
  return (
    <label className="field">
      <span>{label}</span>
      <input {...input} />
    </label>
  );
}

export function FormError({ error }: { error: ApiError | null }) {
  return error ? <ErrorBox error={error} /> : null;
}

export function Submit({ busy, children }: { busy: boolean; children: ReactNode }) {
  return (
    <button type="submit" disabled={busy} aria-busy={busy}>
      {busy ? 'Working…' : children}
    </button>
  );
}

export const text = (f: FormData, name: string) => String(f.get(name) ?? '');
