// The settings pages' routes, placed inside the signed-in frame's route in main.tsx, and the invitation link's page
// (outside it: a person without a team, or signed out, opens it too).
import { Navigate, Route } from 'react-router';
import { Settings } from './Settings';
import { TeamSettings } from './Team';
import { Members } from './Members';
import { Invitations } from './Invitations';
import { Mfa } from './Mfa';
import { Sessions } from './Sessions';
import { Password } from './Password';
import { Export } from './Export';
import { Deletion } from './Deletion';
import { Invitation } from './Invitation';
import { Grants } from '../oauth/Grants';

export const settingsRoutes = (
  <Route path="settings" element={<Settings />}>
    <Route index element={<Navigate to="/dashboard/settings/team" replace />} />
    <Route path="team" element={<TeamSettings />} />
    <Route path="members" element={<Members />} />
    <Route path="invitations" element={<Invitations />} />
    <Route path="mfa" element={<Mfa />} />
    <Route path="sessions" element={<Sessions />} />
    <Route path="password" element={<Password />} />
    <Route path="export" element={<Export />} />
    <Route path="oauth-grants" element={<Grants />} />
    <Route path="deletion" element={<Deletion />} />
  </Route>
);

export const invitationRoute = <Route path="/dashboard/invitation" element={<Invitation />} />;
