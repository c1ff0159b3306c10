// The password: changed through a reset link mailed to the signed-in address (the api has no other way to set it; the
// link's page sets the new one and ends every session). Reachable without a team, as MFA and sessions are.
import { useState } from 'react';
import { api } from '../../api/client';
import { FormError, Submit, useSubmit } from '../../form';
import { useSession } from '../../session';

export function Password() {
  const { load } = useSession();
  const email = load.state === 'ready' ? load.data.me.email : '';
  const [sent, setSent] = useState(false);
  const send = useSubmit(
    () => api.POST('/auth/password-reset', { body: { email } }),
    () => setSent(true),
  );
  return (
    <>
      <h1>Password</h1>
      <p>
        To change your password, ask for a link by mail: it opens a page where you set the new one (valid one hour).
        Setting it signs out every session, this one too.
      </p>
      <form id="password-reset-form" onSubmit={send.onSubmit}>
        <p>
          The link goes to <strong>{email}</strong>.
        </p>
        <FormError error={send.error} />
        <Submit busy={send.busy}>Mail me a link</Submit>
      </form>
      {sent ? (
        <p role="status" id="password-reset-sent">
          Sent: open the link in the mail to {email}.
        </p>
      ) : null}
    </>
  );
}
