// Sign-in, and its second step when MFA is on: a code from the authenticator app or a recovery code.
import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { api, type Schemas } from '../../api/client';
import { Field, FormError, Submit, text, useSubmit } from '../../form';
import { useSession } from '../../session';
import { AuthFrame } from './Frame';

type Challenge = Schemas['MfaChallenge'];

export function SignIn() {
  const [challenge, setChallenge] = useState<Challenge | null>(null);
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const { reload } = useSession();
  const next = params.get('next')?.startsWith('/') ? params.get('next')! : '/dashboard/overview';
  const signedIn = () => {
    reload();
    navigate(next);
  };
  const login = useSubmit(
    (f) => api.POST('/auth/login', { body: { email: text(f, 'email'), password: text(f, 'password') } }),
    (data) => (data.object === 'mfa_challenge' ? setChallenge(data as Challenge) : signedIn()),
  );
  if (challenge) return <MfaStep challenge={challenge} done={signedIn} />;
  return (
    <AuthFrame title="Sign in">
      <form onSubmit={login.onSubmit} id="sign-in-form">
        <Field label="Email" name="email" type="email" required autoComplete="email" />
        <Field label="Password" name="password" type="password" required autoComplete="current-password" />
        <FormError error={login.error} />
        <Submit busy={login.busy}>Sign in</Submit>
      </form>
      <p>
        <Link to="/reset-password">Forgot your password?</Link> · <Link to="/sign-up">Create an account</Link>
      </p>
    </AuthFrame>
  );
}

function MfaStep({ challenge, done }: { challenge: Challenge; done: () => void }) {
  const [recovery, setRecovery] = useState(false);
  const token = challenge.challenge_token;
  const step = useSubmit(
    (f) =>
      recovery
        ? api.POST('/auth/login/recovery', { body: { challenge_token: token, recovery_code: text(f, 'code') } })
        : api.POST('/auth/login/mfa', { body: { challenge_token: token, code: text(f, 'code') } }),
    done,
  );
  return (
    <AuthFrame title="Two-factor authentication">
      <p>{recovery ? 'Enter one of your recovery codes.' : 'Enter the 6-digit code from your authenticator app.'}</p>
      <form onSubmit={step.onSubmit} id="mfa-form" key={String(recovery)}>
        <Field
          label={recovery ? 'Recovery code' : 'Code'}
          name="code"
          required
          autoComplete="one-time-code"
          inputMode={recovery ? 'text' : 'numeric'}
        />
        <FormError error={step.error} />
        <Submit busy={step.busy}>Verify</Submit>
      </form>
      <p>
        <button type="button" className="link" onClick={() => setRecovery(!recovery)}>
          {recovery ? 'Use an authenticator code' : 'Use a recovery code instead'}
        </button>
      </p>
    </AuthFrame>
  );
}
