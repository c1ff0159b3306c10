// The invitation link's page, /dashboard/invitation#token=… (the token in the fragment, never sent to a server by
// the browser): signed in with the invited address, join the team; signed out, sign in (or up) first. The token is
// kept in this tab's sessionStorage meanwhile, so the page finds it again after signing in.
import { Link, useNavigate } from 'react-router';
import { api, type ApiError } from '../../api/client';
import { useSession } from '../../session';
import { ErrorBox, Loading } from '../../ui';
import { AuthFrame } from '../auth/Frame';
import { useFragmentToken } from '../auth/Verify';
import { useAction } from './common';

const KEPT = 'postwerk_invitation';

function useInvitationToken(): string | null {
  const fromLink = useFragmentToken('token', 'invite');
  if (fromLink) sessionStorage.setItem(KEPT, fromLink);
  return fromLink ?? sessionStorage.getItem(KEPT);
}

export function Invitation() {
  const token = useInvitationToken();
  const { load } = useSession();
  if (!token)
    return (
      <AuthFrame title="Join a team">
        <ErrorBox
          error={
            { name: 'missing_token', message: 'This link has no token: open the link from the mail again.' } as ApiError
          }
        />
      </AuthFrame>
    );
  if (load.state === 'loading')
    return (
      <AuthFrame title="Join a team">
        <Loading what="your session" />
      </AuthFrame>
    );
  if (load.state === 'error')
    return (
      <AuthFrame title="Join a team">
        <p>You are invited to a team on Postwerk. Sign in with the address the invitation was sent to, to join it.</p>
        <p>
          <Link to={`/sign-in?next=${encodeURIComponent('/dashboard/invitation')}`} id="invitation-sign-in">
            Sign in to accept
          </Link>
        </p>
        <p>
          No account yet? <Link to="/sign-up">Create one</Link> with that address, confirm it, then open the invitation
          link again.
        </p>
      </AuthFrame>
    );
  return <Accept token={token} email={load.data.me.email} teams={load.data.me.teams.map((t) => t.id)} />;
}

function Accept({ token, email, teams }: { token: string; email: string; teams: string[] }) {
  const navigate = useNavigate();
  const { reload } = useSession();
  const accept = useAction();
  async function open() {
    // The team just joined becomes this session's current team.
    const me = await api.GET('/me');
    const added = me.data?.teams.find((t) => !teams.includes(t.id));
    if (added) await api.POST('/teams/{team_id}/switch', { params: { path: { team_id: added.id } } });
    sessionStorage.removeItem(KEPT);
    reload();
    navigate('/dashboard/settings/team');
  }
  const next = `/sign-in?next=${encodeURIComponent('/dashboard/invitation')}`;
  return (
    <AuthFrame title="Join a team">
      <p>
        You are signed in as <strong>{email}</strong>. Accept the invitation to join the team with the role it names.
      </p>
      {accept.error ? <ErrorBox error={accept.error} /> : null}
      <button
        type="button"
        id="accept-invitation"
        disabled={accept.busy}
        onClick={() => void accept.run(() => api.POST('/team-invitations/accept', { body: { token } }), open)}
      >
        {accept.busy ? 'Working…' : 'Accept the invitation'}
      </button>
      <p>
        Not you? <Link to={next}>Sign in as another person</Link>
      </p>
    </AuthFrame>
  );
}
