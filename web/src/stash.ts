// Edits kept across a sign-in: a save refused because the session ended stashes the page's draft in this tab's
// sessionStorage under `<kind>.<id>`, and the page takes it back after the person signed in again (expired.tsx).
export interface DraftStash<T> {
  stash(id: string, draft: T): void;
  /** The stashed draft, removed from storage; null when there is none (or it no longer parses). */
  take(id: string): T | null;
}

export function draftStash<T>(kind: string): DraftStash<T> {
  const key = (id: string) => `postwerk.${kind}.${id}`;
  return {
    stash(id, draft) {
      try {
        sessionStorage.setItem(key(id), JSON.stringify(draft));
      } catch {
        // Storage full or off: the edits stay in the page, as long as it is open.
      }
    },
    take(id) {
      const s = sessionStorage.getItem(key(id));
      sessionStorage.removeItem(key(id));
      if (!s) return null;
      try {
        return JSON.parse(s) as T;
      } catch {
        return null;
      }
    },
  };
}

/** Two drafts hold the same edits (drafts are plain data, built in the same key order). */
export const sameDraft = <T>(a: T, b: T) => JSON.stringify(a) === JSON.stringify(b);
