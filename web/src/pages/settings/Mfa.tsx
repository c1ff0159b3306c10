// Two-factor authentication (TOTP) of the signed-in person: turning it on (a QR code and the key, then a code and
// the password), the recovery codes shown once, new codes, turning it off.
import { useState } from 'react';
import { api, type Schemas } from '../../api/client';
import { Field, FormError, Submit, text, useSubmit } from '../../form';
import { formatTime } from '../../time';
import { CopyButton, ErrorBox, Shown, useLoad } from '../../ui';
import { useAction } from './common';
import { QrCode } from './Qr';

export function Mfa() {
  const [status, reload] = useLoad(() => api.GET('/auth/mfa'), []);
  const [codes, setCodes] = useState<string[] | null>(null);
  const shown = (c: string[]) => {
    setCodes(c);
    reload();
  };
  return (
    <>
      <h1>Two-factor authentication</h1>
      {codes ? <RecoveryCodes codes={codes} done={() => setCodes(null)} /> : null}
      <Shown load={status} what="your two-factor status">
        {(s) =>
          s.enabled ? (
            <On status={s} codes={shown} changed={reload} />
          ) : (
            <Off changed={reload} activated={(a) => shown(a.recovery_codes)} />
          )
        }
      </Shown>
    </>
  );
}

function Off({ changed, activated }: { changed: () => void; activated: (a: Schemas['MfaActivated']) => void }) {
  const [enrolment, setEnrolment] = useState<Schemas['MfaEnrolment'] | null>(null);
  const enrol = useAction();
  if (enrolment) return <Enrol enrolment={enrolment} activated={activated} cancel={changed} />;
  return (
    <section className="panel">
      <p>
        Two-factor authentication is <strong id="mfa-state">off</strong>. Turn it on to ask for a code from an
        authenticator app at each sign-in.
      </p>
      {enrol.error ? <ErrorBox error={enrol.error} /> : null}
      <button
        type="button"
        id="mfa-enrol"
        disabled={enrol.busy}
        onClick={() => void enrol.run(() => api.POST('/auth/mfa/enrol', { body: {} }), setEnrolment)}
      >
        Turn on two-factor authentication
      </button>
    </section>
  );
}

function Enrol(props: {
  enrolment: Schemas['MfaEnrolment'];
  activated: (a: Schemas['MfaActivated']) => void;
  cancel: () => void;
}) {
  const { secret, otpauth_url } = props.enrolment;
  const confirm = useSubmit(
    (f) => api.POST('/auth/mfa/confirm', { body: { code: text(f, 'code'), password: text(f, 'password') } }),
    props.activated,
  );
  return (
    <section className="panel" aria-labelledby="enrol-title">
      <h2 id="enrol-title">Add Postwerk to your authenticator app</h2>
      <ol className="steps">
        <li>
          Scan this code with the app:
          <QrCode text={otpauth_url} label="QR code of your two-factor key" />
        </li>
        <li>
          Or type the key by hand:{' '}
          <span className="secret">
            <code id="mfa-secret">{secret.replace(/(.{4})(?=.)/g, '$1 ')}</code>{' '}
            <CopyButton text={secret} label="Copy the key" />
          </span>
        </li>
        <li>Enter the 6-digit code the app shows, and your password.</li>
      </ol>
      <form id="mfa-confirm-form" onSubmit={confirm.onSubmit}>
        <Field label="Code" name="code" required autoComplete="one-time-code" inputMode="numeric" />
        <Field label="Password" name="password" type="password" required autoComplete="current-password" />
        <FormError error={confirm.error} />
        <div className="actions">
          <button type="button" className="secondary" onClick={props.cancel}>
            Cancel
          </button>
          <Submit busy={confirm.busy}>Turn on</Submit>
        </div>
      </form>
    </section>
  );
}

function RecoveryCodes({ codes, done }: { codes: string[]; done: () => void }) {
  return (
    <section className="panel once" aria-labelledby="codes-title">
      <h2 id="codes-title">Your recovery codes</h2>
      <p>Keep them somewhere safe: they are shown only this once. Each one signs you in once without the app.</p>
      <ul className="codes" id="recovery-codes">
        {codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <p>
        <CopyButton text={codes.join('\n')} label="Copy the recovery codes" />{' '}
        <button type="button" onClick={done}>
          I have saved them
        </button>
      </p>
    </section>
  );
}

function On(props: { status: Schemas['MfaStatus']; codes: (c: string[]) => void; changed: () => void }) {
  const s = props.status;
  const renew = useSubmit(
    (f) => api.POST('/auth/mfa/recovery-codes', { body: { code: text(f, 'code') } }),
    (r) => props.codes(r.recovery_codes),
  );
  const off = useSubmit(
    (f) => api.POST('/auth/mfa/disable', { body: { password: text(f, 'password') } }),
    props.changed,
  );
  return (
    <>
      <section className="panel">
        <p>
          Two-factor authentication is <strong id="mfa-state">on</strong> since {formatTime(s.enabled_at)}.{' '}
          <span id="codes-left">{s.recovery_codes_remaining}</span> recovery codes left.
        </p>
      </section>
      <form className="panel" id="new-codes-form" onSubmit={renew.onSubmit}>
        <h2>New recovery codes</h2>
        <p>The old ones stop working.</p>
        <Field label="Code from your app" name="code" required autoComplete="one-time-code" inputMode="numeric" />
        <FormError error={renew.error} />
        <Submit busy={renew.busy}>Make new codes</Submit>
      </form>
      <form className="panel" id="mfa-disable-form" onSubmit={off.onSubmit}>
        <h2>Turn two-factor authentication off</h2>
        <Field label="Password" name="password" type="password" required autoComplete="current-password" />
        <FormError error={off.error} />
        <Submit busy={off.busy}>Turn off</Submit>
      </form>
    </>
  );
}
