// Signed in again (the sign-in-again dialog, web/src/expired.tsx): what was loaded while the session was lost (a 401
// shown on a list) is loaded again. Only loads showing an error rerun, so a page's loaded data (an editor's content)
// is never replaced under what the person typed.
const listeners = new Set<() => void>();

export function onSignedInAgain(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function signedInAgain() {
  listeners.forEach((l) => l());
}
