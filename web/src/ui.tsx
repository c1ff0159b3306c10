// The states every page shows (loading, empty, error) and a loader hook over the generated client's answers.
import { useCallback, useEffect, useState, type ReactNode } from 'react';
import { asApiError, type ApiError } from './api/client';
import { onSignedInAgain } from './signed-in';

/** `refreshError`: a quiet reload failed; `data` is the last answer that came (useQuietLoad). */
export type Load<T> =
  { state: 'loading' } | { state: 'error'; error: ApiError } | { state: 'ready'; data: T; refreshError?: ApiError };

/** An openapi-fetch answer: data, or the api's Error. */
export interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

export function useLoad<T>(fetcher: () => Promise<Answer<T>>, deps: unknown[]): [Load<T>, () => void] {
  return useFetched(fetcher, deps, false);
}

/**
 * As useLoad, but a reload keeps showing the data it had until the new answer (a list followed while it changes),
 * and a reload that fails keeps it too, with the failure beside it (`refreshError`): a page that follows something
 * goes on asking through a moment's outage (a restarting api) instead of trading what it showed for an error.
 */
export function useQuietLoad<T>(fetcher: () => Promise<Answer<T>>, deps: unknown[]): [Load<T>, () => void] {
  return useFetched(fetcher, deps, true);
}

function useFetched<T>(fetcher: () => Promise<Answer<T>>, deps: unknown[], quiet: boolean): [Load<T>, () => void] {
  const [load, setLoad] = useState<Load<T>>({ state: 'loading' });
  const [tick, setTick] = useState(0);
  const run = useCallback(fetcher, deps);
  useEffect(() => {
    let live = true;
    if (!quiet) setLoad({ state: 'loading' });
    const fail = (error: ApiError) =>
      setLoad((was) =>
        quiet && was.state === 'ready'
          ? { state: 'ready', data: was.data, refreshError: error }
          : { state: 'error', error },
      );
    run()
      .then((r) => {
        if (!live) return;
        if (r.data !== undefined && r.response.ok) setLoad({ state: 'ready', data: r.data });
        else fail(asApiError(r.error, r.response.status));
      })
      .catch((e) => live && fail(asApiError(e)));
    return () => {
      live = false;
    };
  }, [run, tick, quiet]);
  // An error shown (a 401 while the session was lost, among others) is tried again once signed in again.
  const failed = load.state === 'error' || (load.state === 'ready' && load.refreshError !== undefined);
  useEffect(() => (failed ? onSignedInAgain(() => setTick((t) => t + 1)) : undefined), [failed]);
  return [load, () => setTick((t) => t + 1)];
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>;
}

/** The api's message and, for a refused field, each field's path and what is wrong with it. */
export function ErrorBox({ error }: { error: ApiError }) {
  return (
    <div className="error" role="alert">
      <p>
        <strong>{error.message}</strong>
        {error.name ? <span className="code"> ({error.name})</span> : null}
      </p>
      {error.statusCode === 401 && error.name === 'missing_api_key' ? (
        <p>
          <a href={`/sign-in?next=${encodeURIComponent(window.location.pathname)}`}>Sign in again</a> to go on.
        </p>
      ) : null}
      {error.errors?.length ? (
        <ul>
          {error.errors.map((f, i) => (
            <li key={i}>
              <code>{f.path || '(body)'}</code>: {f.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

export function Shown<T>({ load, what, children }: { load: Load<T>; what: string; children: (data: T) => ReactNode }) {
  if (load.state === 'loading') return <Loading what={what} />;
  // A page's address with a malformed id (the api's 422 invalid_parameter) names nothing, as an unknown id does.
  if (load.state === 'error' && load.error.name === 'invalid_parameter')
    return <ErrorBox error={{ ...load.error, message: `Not found: this address does not name ${what}`, errors: [] }} />;
  if (load.state === 'error') return <ErrorBox error={load.error} />;
  return (
    <>
      {load.refreshError ? <Stale what={what} error={load.refreshError} /> : null}
      {children(load.data)}
    </>
  );
}

/** A quiet reload failed: what is shown is the last answer. */
export function Stale({ what, error }: { what: string; error: ApiError }) {
  return (
    <p className="stale" role="status">
      Could not refresh {what}: {error.message}. What you see may be out of date.
    </p>
  );
}

/** Copies `text` to the clipboard; says so for a moment. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      className="small"
      aria-label={label}
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(() => {
          setDone(true);
          setTimeout(() => setDone(false), 1500);
        });
      }}
    >
      {done ? 'Copied' : 'Copy'}
    </button>
  );
}

/** Newer and Older over a cursor-paged list: `after` is the stack of cursors that led to this page. */
export function Pager(props: {
  after: string[];
  setAfter: (after: string[]) => void;
  list: { has_more: boolean; data: { id: string }[] };
}) {
  const { after, setAfter, list } = props;
  return (
    <div className="pager">
      <button type="button" disabled={after.length === 0} onClick={() => setAfter(after.slice(0, -1))}>
        Newer
      </button>
      <button
        type="button"
        disabled={!list.has_more}
        onClick={() => setAfter([...after, list.data[list.data.length - 1].id])}
      >
        Older
      </button>
    </div>
  );
}
