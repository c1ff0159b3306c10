import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../../api/client';
import { Field, FormError, Submit, text, useSubmit } from '../../form';
import { AuthFrame } from './Frame';

export function SignUp() {
  const [sent, setSent] = useState<string | null>(null);
  const signup = useSubmit(
    (f) =>
      api.POST('/auth/signup', {
        body: { email: text(f, 'email'), password: text(f, 'password'), name: text(f, 'name') || undefined },
      }),
    () => setSent('sent'),
  );
  if (sent)
    return (
      <AuthFrame title="Check your inbox">
        <p role="status">We sent a link to confirm your address. It works once, for 24 hours.</p>
        <p>
          <Link to="/sign-in">Back to sign in</Link>
        </p>
      </AuthFrame>
    );
  return (
    <AuthFrame title="Create an account">
      <form onSubmit={signup.onSubmit} id="sign-up-form">
        <Field label="Name" name="name" autoComplete="name" />
        <Field label="Email" name="email" type="email" required autoComplete="email" />
        <Field
          label="Password (8 characters or more)"
          name="password"
          type="password"
          required
          minLength={8}
          autoComplete="new-password"
        />
        <FormError error={signup.error} />
        <Submit busy={signup.busy}>Sign up</Submit>
      </form>
      <p>
        Have an account? <Link to="/sign-in">Sign in</Link>
      </p>
    </AuthFrame>
  );
}
