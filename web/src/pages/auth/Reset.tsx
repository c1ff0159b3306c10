// Password reset: ask for a link by address; the link's page (/reset-password#token=…) sets the new password.
import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../../api/client';
import { Field, FormError, Submit, text, useSubmit } from '../../form';
import { AuthFrame } from './Frame';
import { useFragmentToken } from './Verify';

export function Reset() {
  const token = useFragmentToken('token', 'reset');
  return token ? <SetPassword key={token} token={token} /> : <RequestLink />;
}

function RequestLink() {
  const [sent, setSent] = useState(false);
  const ask = useSubmit(
    (f) => api.POST('/auth/password-reset', { body: { email: text(f, 'email') } }),
    () => setSent(true),
  );
  return (
    <AuthFrame title="Reset your password">
      {sent ? (
        <p role="status">If an account has this address, a link to reset its password is on its way (valid 1 hour).</p>
      ) : (
        <form onSubmit={ask.onSubmit} id="reset-form">
          <Field label="Email" name="email" type="email" required autoComplete="email" />
          <FormError error={ask.error} />
          <Submit busy={ask.busy}>Send the link</Submit>
        </form>
      )}
      <p>
        <Link to="/sign-in">Back to sign in</Link>
      </p>
    </AuthFrame>
  );
}

function SetPassword({ token }: { token: string }) {
  const [done, setDone] = useState(false);
  const set = useSubmit(
    (f) => api.POST('/auth/password-reset/confirm', { body: { token, password: text(f, 'password') } }),
    () => setDone(true),
  );
  return (
    <AuthFrame title="Choose a new password">
      {done ? (
        <p role="status">Your password is changed and every session signed out.</p>
      ) : (
        <form onSubmit={set.onSubmit} id="new-password-form">
          <Field
            label="New password"
            name="password"
            type="password"
            required
            minLength={8}
            autoComplete="new-password"
          />
          <FormError error={set.error} />
          <Submit busy={set.busy}>Set the password</Submit>
        </form>
      )}
      <p>
        <Link to="/sign-in">Sign in</Link>
      </p>
    </AuthFrame>
  );
}
