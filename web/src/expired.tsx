// A session that ends while a page is open (expired, revoked, signed out elsewhere): the next API call answers 401.
// Instead of leaving the page (and what was typed in it), a dialog asks to sign in again in place, or in a new tab;
// then the person retries. The page underneath stays mounted, its forms as they were; what failed to load meanwhile
// loads again (./signed-in.ts).
import { useEffect, useState, useSyncExternalStore } from 'react';
import { api, asApiError, type ApiError, type Schemas } from './api/client';
import { Dialog } from './dialog';
import { ErrorBox } from './ui';
import { signedInAgain } from './signed-in';

let armed = 0;
let expired = false;
const listeners = new Set<() => void>();
const notify = () => listeners.forEach((l) => l());

/** Calls whose 401 is an answer, not a lost session (signing in, the first look at who is signed in). */
const ANSWERS = /\/auth\/(login|signup|verify-email|password-reset)/;

api.use({
  onResponse({ request, response }) {
    if (armed > 0 && response.status === 401 && !ANSWERS.test(new URL(request.url).pathname) && !expired) {
      expired = true;
      notify();
    }
    return response;
  },
});

function useExpired(): boolean {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => expired,
  );
}

/** The dialog closed; `signedIn` when the session is back (then the pages' failed loads run again). */
function resolved(signedIn = false) {
  expired = false;
  notify();
  if (signedIn) signedInAgain();
}

/** Shown in the signed-in frame: the sign-in-again dialog when the session was lost. */
export function SessionExpired({ email }: { email: string }) {
  const lost = useExpired();
  useEffect(() => {
    armed++;
    return () => {
      armed--;
    };
  }, []);
  if (!lost) return null;
  return (
    <Dialog title="Your session has ended" onClose={() => resolved()} id="session-expired">
      <p>
        Sign in again to go on. Nothing on this page is lost: once signed in, send the form again (it keeps what you
        typed).
      </p>
      <SignInAgain email={email} />
      <p>
        Or{' '}
        <a href={`/sign-in?next=${encodeURIComponent('/dashboard')}`} target="_blank" rel="noopener">
          sign in in a new tab
        </a>
        , then <CheckAgain />
      </p>
    </Dialog>
  );
}

function SignInAgain({ email }: { email: string }) {
  const [challenge, setChallenge] = useState<Schemas['MfaChallenge'] | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(form: HTMLFormElement) {
    const f = new FormData(form);
    setBusy(true);
    setError(null);
    try {
      const r = challenge
        ? await api.POST('/auth/login/mfa', {
            body: { challenge_token: challenge.challenge_token, code: String(f.get('code')) },
          })
        : await api.POST('/auth/login', { body: { email, password: String(f.get('password')) } });
      if (!r.response.ok || !r.data) setError(asApiError(r.error, r.response.status));
      else if (r.data.object === 'mfa_challenge') setChallenge(r.data as Schemas['MfaChallenge']);
      else resolved(true);
    } catch (e) {
      setError(asApiError(e));
    } finally {
      setBusy(false);
    }
  }
  return (
    <form
      id="sign-in-again-form"
      onSubmit={(e) => {
        e.preventDefault();
        void submit(e.currentTarget);
      }}
    >
      <p>
        Signing in as <strong>{email}</strong>
      </p>
      {challenge ? (
        <label className="field" key="code">
          <span>Code from your authenticator app</span>
          <input name="code" required autoComplete="one-time-code" inputMode="numeric" />
        </label>
      ) : (
        <label className="field" key="password">
          <span>Password</span>
          <input name="password" type="password" required autoComplete="current-password" />
        </label>
      )}
      {error ? <ErrorBox error={error} /> : null}
      <button type="submit" disabled={busy}>
        {busy ? 'Working…' : 'Sign in'}
      </button>
    </form>
  );
}

function CheckAgain() {
  const [still, setStill] = useState(false);
  return (
    <>
      <button
        type="button"
        className="link"
        onClick={() =>
          void api.GET('/me').then((r) => {
            if (r.response.ok) resolved(true);
            else setStill(true);
          })
        }
      >
        check again
      </button>
      .{still ? <span role="alert"> Still signed out.</span> : null}
    </>
  );
}
