// The OAuth consent page (/oauth/consent/:uid): what an application asks for (its registered name and logo, each
// scope in plain words) and the team it would get, granted or declined by the signed-in person. Signed out: to
// /sign-in and back here. Every scope asked for is ticked; the person may untick any but the last (granting fewer
// than asked: the tokens carry only those ticked). The decision answers where the browser goes next.
import { useState } from 'react';
import { Navigate, useLocation, useParams } from 'react-router';
import { api, asApiError, type ApiError, type Schemas } from '../../api/client';
import { useSession } from '../../session';
import { ErrorBox, Shown, useLoad } from '../../ui';
import { AuthFrame } from '../auth/Frame';

type Consent = Schemas['OAuthConsent'];

function Logo({ client }: { client: Consent['client'] }) {
  const [broken, setBroken] = useState(false);
  const name = client.name ?? 'Unnamed application';
  if (!client.logo_uri || broken || !/^https:\/\//.test(client.logo_uri))
    return (
      <span className="client-logo placeholder" aria-hidden="true">
        {name.slice(0, 1).toUpperCase()}
      </span>
    );
  return <img className="client-logo" src={client.logo_uri} alt="" onError={() => setBroken(true)} />;
}

function Scopes({ consent, kept, setKept }: { consent: Consent; kept: Set<string>; setKept(k: Set<string>): void }) {
  if (consent.scopes.length === 0) return <p className="empty">Nothing: it asked for no permission.</p>;
  const toggle = (scope: string, on: boolean) => {
    const next = new Set(kept);
    if (on) next.add(scope);
    else next.delete(scope);
    setKept(next);
  };
  return (
    <fieldset className="scopes">
      <legend>It will be able to (untick what you do not want to allow):</legend>
      {consent.scopes.map((s) => (
        <label key={s.scope} className="scope-choice">
          <input
            type="checkbox"
            checked={kept.has(s.scope)}
            // The last ticked scope stays: granting nothing is Deny.
            disabled={kept.size === 1 && kept.has(s.scope)}
            onChange={(e) => toggle(s.scope, e.target.checked)}
          />
          <span>
            {s.description} <code>{s.scope}</code>
          </span>
        </label>
      ))}
    </fieldset>
  );
}

function Decide({ consent, uid }: { consent: Consent; uid: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [kept, setKept] = useState(() => new Set(consent.scopes.map((s) => s.scope)));
  async function decide(confirm: boolean) {
    setBusy(true);
    setError(null);
    const scopes = consent.scopes.map((s) => s.scope).filter((s) => kept.has(s));
    const r = confirm
      ? await api.POST('/oauth/consent/{uid}/confirm', {
          params: { path: { uid } },
          body: scopes.length ? { scopes } : {},
        })
      : await api.POST('/oauth/consent/{uid}/deny', { params: { path: { uid } } });
    if (r.data) window.location.assign(r.data.redirect_to);
    else {
      setError(asApiError(r.error, r.response.status));
      setBusy(false);
    }
  }
  const name = consent.client.name ?? 'An unnamed application';
  const fewer = kept.size < consent.scopes.length;
  return (
    <>
      <div className="client">
        <Logo client={consent.client} />
        <p>
          <strong className="client-name">{name}</strong> wants access to the team{' '}
          <strong className="team-name">{consent.team?.name ?? '(none)'}</strong>.
        </p>
      </div>
      <Scopes consent={consent} kept={kept} setKept={setKept} />
      <p className="muted">
        Answers go back to <code>{consent.client.redirect_host}</code>. You can revoke this access at any time under
        Settings, OAuth grants.
      </p>
      {error ? <ErrorBox error={error} /> : null}
      {consent.team ? (
        <div className="actions">
          <button type="button" disabled={busy} onClick={() => void decide(true)}>
            {fewer ? `Allow ${kept.size} of ${consent.scopes.length}` : 'Allow access'}
          </button>
          <button type="button" className="secondary" disabled={busy} onClick={() => void decide(false)}>
            Deny
          </button>
        </div>
      ) : (
        <p role="alert">You have no team yet: create one in the dashboard first.</p>
      )}
    </>
  );
}

export function Consent() {
  const { uid = '' } = useParams();
  const location = useLocation();
  const { load: session } = useSession();
  const [load] = useLoad(() => api.GET('/oauth/consent/{uid}/details', { params: { path: { uid } } }), [uid]);
  if (session.state === 'error' && session.error.statusCode === 401)
    return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname)}`} replace />;
  return (
    <AuthFrame title="Allow access?">
      <Shown load={load} what="the request">
        {(consent) => <Decide consent={consent} uid={uid} />}
      </Shown>
    </AuthFrame>
  );
}
