// What the audience pages share: the member check, a delete button that asks once more, the API error of an
// action, and cursor paging kept in the page's URL (shareable; Back returns to the page before).
import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { asApiError, type ApiError } from '../../api/client';
import { can, useSession } from '../../session';
import type { Answer } from '../../ui';

/** Whether the signed-in person may change things in the current team (members and admins). */
export function useMember(): boolean {
  const { load } = useSession();
  return load.state === 'ready' && can(load.data.role, 'member');
}

/** Runs an action's request; its refusal is kept to show. */
export function useAction() {
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  async function run<T>(send: () => Promise<Answer<T>>, done: (data: T) => void) {
    setBusy(true);
    setError(null);
    try {
      const r = await send();
      if (r.response.ok && r.data !== undefined) done(r.data);
      else setError(asApiError(r.error, r.response.status));
    } catch (e) {
      setError(asApiError(e));
    } finally {
      setBusy(false);
    }
  }
  return { error, busy, run, setError };
}

/** "Delete", then "Delete <what>? Yes / No": nothing is deleted by one stray click. */
export function ConfirmDelete({ what, onConfirm, busy }: { what: string; onConfirm: () => void; busy?: boolean }) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button type="button" className="small danger" aria-label={`Delete ${what}`} onClick={() => setAsking(true)}>
        Delete
      </button>
    );
  return (
    <span className="confirm" role="group" aria-label={`Delete ${what}?`}>
      <span>Delete?</span>
      <button type="button" className="small danger" disabled={busy} onClick={onConfirm}>
        Yes, delete
      </button>
      <button type="button" className="small" onClick={() => setAsking(false)}>
        No
      </button>
    </span>
  );
}

/** `after`/`before` cursors in the URL: the page that follows the last row, or precedes the first. */
export function useCursor() {
  const [params, setParams] = useSearchParams();
  const after = params.get('after') ?? undefined;
  const before = params.get('before') ?? undefined;
  function go(change: Record<string, string | undefined>) {
    const next = new URLSearchParams(params);
    next.delete('after');
    next.delete('before');
    for (const [k, v] of Object.entries(change)) {
      if (v) next.set(k, v);
      else next.delete(k);
    }
    setParams(next);
  }
  return { params, after, before, go };
}

/** Newer / Older buttons for a page of `ids` answered for the cursors given. */
export function Pager(props: {
  ids: string[];
  hasMore: boolean;
  after?: string;
  before?: string;
  go: (c: Record<string, string | undefined>) => void;
}) {
  const { ids, hasMore, after, before, go } = props;
  // Read forwards (no cursor or `after`): more means older rows; read backwards (`before`): more means newer rows.
  const newer = before ? hasMore : after !== undefined;
  const older = before ? true : hasMore;
  if ((!newer && !older) || ids.length === 0) return null;
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={!newer} onClick={() => go({ before: ids[0] })}>
        Previous page
      </button>
      <button type="button" disabled={!older} onClick={() => go({ after: ids[ids.length - 1] })}>
        Next page
      </button>
    </nav>
  );
}
