// The verification link's page: /verify#token=… (the token in the fragment, never sent to a server by the browser).
import { useEffect, useState } from 'react';
import { Link, useLocation } from 'react-router';
import { api, asApiError, type ApiError } from '../../api/client';
import { ErrorBox, Loading } from '../../ui';
import { AuthFrame } from './Frame';

/** `token` (or the account page's `verify=`/`reset=`) from the URL's fragment, followed as it changes. */
export function useFragmentToken(...names: string[]): string | null {
  const params = new URLSearchParams(useLocation().hash.slice(1));
  for (const name of names) if (params.get(name)) return params.get(name);
  return null;
}

type Outcome = 'done' | ApiError;

/**
 * One request per token for the page's life: the first use spends it, so a second request (the page mounted again,
 * as when the session's first answer re-renders the routes) would be refused as "used" and, answering last, replace
 * the confirmation with that error (a CI run saw both requests, 200 then 422).
 */
const verifications = new Map<string, Promise<Outcome>>();

function verification(token: string): Promise<Outcome> {
  let outcome = verifications.get(token);
  if (!outcome) {
    outcome = api
      .POST('/auth/verify-email', { body: { token } })
      .then((r): Outcome => (r.response.ok ? 'done' : asApiError(r.error, r.response.status)))
      .catch((e: unknown) => asApiError(e));
    verifications.set(token, outcome);
  }
  return outcome;
}

export function Verify() {
  const [state, setState] = useState<'working' | Outcome>('working');
  const token = useFragmentToken('token', 'verify');
  useEffect(() => {
    setState('working');
    if (!token) {
      setState({
        name: 'missing_token',
        message: 'This link has no token: open the link from the mail again.',
      } as ApiError);
      return;
    }
    let shown = true;
    void verification(token).then((outcome) => shown && setState(outcome));
    return () => {
      shown = false;
    };
  }, [token]);
  return (
    <AuthFrame title="Confirm your address">
      {state === 'working' ? (
        <Loading what="your confirmation" />
      ) : state === 'done' ? (
        <p role="status">Your address is confirmed and your account is ready.</p>
      ) : (
        <ErrorBox error={state} />
      )}
      <p>
        <Link to="/sign-in">Sign in</Link>
      </p>
    </AuthFrame>
  );
}
