// The settings frame: a section list (each section its own URL under /dashboard/settings/) and the section.
import { NavLink, Outlet } from 'react-router';
import './settings.css';

export const SECTIONS = [
  ['team', 'Team'],
  ['members', 'Members'],
  ['invitations', 'Invitations'],
  ['mfa', 'Two-factor'],
  ['sessions', 'Sessions'],
  ['export', 'Export'],
  ['oauth-grants', 'OAuth grants'],
  ['deletion', 'Delete team'],
] as const;

export function Settings() {
  return (
    <div className="settings">
      <nav aria-label="Settings" className="subnav">
        <ul>
          {SECTIONS.map(([to, label]) => (
            <li key={to}>
              <NavLink to={`/dashboard/settings/${to}`}>{label}</NavLink>
            </li>
          ))}
        </ul>
      </nav>
      <div className="section">
        <Outlet />
      </div>
    </div>
  );
}
