// The signed-in frame: navigation, the team switcher, who is signed in and sign-out. Signed out: to /sign-in.
import { useEffect, useState } from 'react';
import { Navigate, NavLink, Outlet, useLocation, useNavigate } from 'react-router';
import { api } from '../api/client';
import { useSession, type SessionInfo } from '../session';
import { ErrorBox, Loading } from '../ui';
import { NewTeam } from './NewTeam';
import { SessionExpired } from '../expired';
import { isAccountPath } from './settings/Settings';

const NAV = [
  ['/dashboard/overview', 'Overview'],
  ['/dashboard/emails', 'Emails'],
  ['/dashboard/received', 'Received mail'],
  ['/dashboard/domains', 'Domains'],
  ['/dashboard/suppressions', 'Suppressions'],
  ['/dashboard/contacts', 'Contacts'],
  ['/dashboard/segments', 'Segments'],
  ['/dashboard/topics', 'Topics'],
  ['/dashboard/contact-properties', 'Properties'],
  ['/dashboard/templates', 'Templates'],
  ['/dashboard/broadcasts', 'Broadcasts'],
  ['/dashboard/api-keys', 'API keys'],
  ['/dashboard/webhooks', 'Webhooks'],
  ['/dashboard/logs', 'Logs'],
  ['/dashboard/settings', 'Settings'],
] as const;

export function Layout() {
  const { load } = useSession();
  const location = useLocation();
  if (load.state === 'loading') return <Loading what="your session" />;
  if (load.state === 'error') {
    if (load.error.statusCode === 401 || load.error.name === 'missing_api_key')
      return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname)}`} replace />;
    return <ErrorBox error={load.error} />;
  }
  return (
    <div className="shell">
      <header className="top">
        <a className="brand" href="/dashboard/overview">
          Postwerk
        </a>
        <TeamSwitcher info={load.data} />
        <SignOut email={load.data.me.email} />
      </header>
      <nav aria-label="Main" className="nav">
        <ul>
          {NAV.map(([to, label]) => (
            <li key={to}>
              <NavLink to={to}>{label}</NavLink>
            </li>
          ))}
        </ul>
      </nav>
      <main className="content">
        {load.data.me.current_team_id || isAccountPath(location.pathname) ? <Outlet /> : <NewTeam />}
      </main>
      <SessionExpired email={load.data.me.email} />
    </div>
  );
}

function TeamSwitcher({ info }: { info: SessionInfo }) {
  const { reload } = useSession();
  const [failed, setFailed] = useState<string | null>(null);
  const teams = info.me.teams;
  if (teams.length === 0) return <span className="team">No team</span>;
  return (
    <label className="team">
      <span className="visually-hidden">Team</span>
      <select
        value={info.me.current_team_id ?? ''}
        onChange={async (e) => {
          const r = await api.POST('/teams/{team_id}/switch', { params: { path: { team_id: e.target.value } } });
          if (r.response.ok) reload();
          else setFailed(r.error?.message ?? 'The team could not be switched.');
        }}
      >
        {teams.map((t) => (
          <option key={t.id} value={t.id}>
            {t.name}
          </option>
        ))}
      </select>
      {info.role ? <span className="role">{info.role}</span> : null}
      {failed ? <span role="alert">{failed}</span> : null}
    </label>
  );
}

function SignOut({ email }: { email: string }) {
  const navigate = useNavigate();
  const { reload } = useSession();
  const [out, setOut] = useState(false);
  useEffect(() => {
    if (out) {
      reload();
      navigate('/sign-in');
    }
  }, [out, reload, navigate]);
  return (
    <div className="who">
      <span id="who">{email}</span>
      <button
        type="button"
        className="small"
        onClick={() => void api.POST('/auth/logout', { body: {} }).then(() => setOut(true))}
      >
        Sign out
      </button>
    </div>
  );
}
