// The settings frame: a section list (each section its own URL under /dashboard/settings/) and the section. The
// account's own sections (ACCOUNT) need no team: a person without one sees only those.
import { NavLink, Outlet } from 'react-router';
import { useSession } from '../../session';
import './settings.css';

export const SECTIONS = [
  ['team', 'Team'],
  ['members', 'Members'],
  ['invitations', 'Invitations'],
  ['mfa', 'Two-factor'],
  ['sessions', 'Sessions'],
  ['password', 'Password'],
  ['export', 'Export'],
  ['oauth-grants', 'OAuth grants'],
  ['deletion', 'Delete team'],
] as const;

/** The sections about the signed-in person rather than a team. */
export const ACCOUNT: readonly string[] = ['mfa', 'sessions', 'password'];

/** Whether a dashboard path is one of the account's own sections (shown without a team). */
export const isAccountPath = (path: string) =>
  ACCOUNT.some((s) => path === `/dashboard/settings/${s}` || path.startsWith(`/dashboard/settings/${s}/`));

export function Settings() {
  const { load } = useSession();
  const teamless = load.state === 'ready' && !load.data.me.current_team_id;
  const sections = teamless ? SECTIONS.filter(([to]) => ACCOUNT.includes(to)) : SECTIONS;
  return (
    <div className="settings">
      <nav aria-label="Settings" className="subnav">
        <ul>
          {sections.map(([to, label]) => (
            <li key={to}>
              <NavLink to={`/dashboard/settings/${to}`}>{label}</NavLink>
            </li>
          ))}
          {teamless ? (
            <li>
              <NavLink to="/dashboard/overview">Create a team</NavLink>
            </li>
          ) : null}
        </ul>
      </nav>
      <div className="section">
        <Outlet />
      </div>
    </div>
  );
}
