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

export function Verify() {
  const [state, setState] = useState<'working' | 'done' | ApiError>('working');
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
    api
      .POST('/auth/verify-email', { body: { token } })
      .then((r) => setState(r.response.ok ? 'done' : asApiError(r.error, r.response.status)))
      .catch((e) => setState(asApiError(e)));
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
