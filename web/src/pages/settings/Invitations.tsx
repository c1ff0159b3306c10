// Invitations (admins): invite an address with a role (the api mails the link), the pending ones, revoking one.
import { useState } from 'react';
import { api, type Schemas } from '../../api/client';
import { Confirm } from '../../dialog';
import { Field, FormError, Submit, text, useSubmit } from '../../form';
import { type Role } from '../../session';
import { formatTime } from '../../time';
import { Empty, ErrorBox, Shown, useLoad } from '../../ui';
import { AdminsOnly, isAdmin, useAction, useCurrent } from './common';

type Pending = Schemas['TeamInvitation'];

export function Invitations() {
  const current = useCurrent();
  if (!isAdmin(current))
    return (
      <>
        <h1>Invitations</h1>
        <AdminsOnly what="invite people and see the pending invitations" role={current.role} />
      </>
    );
  return <AdminInvitations teamId={current.teamId} />;
}

function AdminInvitations({ teamId }: { teamId: string }) {
  const [list, reload] = useLoad(
    () => api.GET('/teams/{team_id}/invitations', { params: { path: { team_id: teamId } } }),
    [teamId],
  );
  const [sent, setSent] = useState<string | null>(null);
  const invite = useSubmit(
    (f) =>
      api.POST('/teams/{team_id}/invitations', {
        params: { path: { team_id: teamId } },
        body: { email: text(f, 'email'), role: text(f, 'role') as Role },
      }),
    (inv) => {
      setSent(inv.email);
      reload();
    },
  );
  return (
    <>
      <h1>Invitations</h1>
      <form className="panel" id="invite-form" onSubmit={invite.onSubmit}>
        <h2>Invite someone</h2>
        <Field label="Email address" name="email" type="email" required autoComplete="off" />
        <label className="field">
          <span>Role</span>
          <select name="role" defaultValue="member">
            <option value="viewer">viewer: reads</option>
            <option value="member">member: sends, manages domains and contacts</option>
            <option value="admin">admin: also members, keys, export and deletion</option>
          </select>
        </label>
        <FormError error={invite.error} />
        {sent ? <p role="status">Invitation mailed to {sent}.</p> : null}
        <Submit busy={invite.busy}>Send the invitation</Submit>
      </form>
      <h2>Pending</h2>
      <Shown load={list} what="invitations">
        {(l) =>
          l.data.length === 0 ? (
            <Empty>No pending invitations.</Empty>
          ) : (
            <PendingTable pending={l.data} teamId={teamId} revoked={reload} />
          )
        }
      </Shown>
    </>
  );
}

function PendingTable({ pending, teamId, revoked }: { pending: Pending[]; teamId: string; revoked: () => void }) {
  const [revoking, setRevoking] = useState<Pending | null>(null);
  const action = useAction();
  return (
    <>
      <div className="table-wrap">
        <table className="stack">
          <thead>
            <tr>
              <th scope="col">Address</th>
              <th scope="col">Role</th>
              <th scope="col" className="wide-only">
                Invited by
              </th>
              <th scope="col" className="wide-only">
                Expires
              </th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {pending.map((i) => (
              <tr key={i.id}>
                <td>{i.email}</td>
                <td>{i.role}</td>
                <td className="wide-only">{i.invited_by ?? '—'}</td>
                <td className="wide-only">{formatTime(i.expires_at)}</td>
                <td>
                  <button
                    type="button"
                    className="small danger"
                    aria-label={`Revoke the invitation of ${i.email}`}
                    onClick={() => {
                      action.clear();
                      setRevoking(i);
                    }}
                  >
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {revoking ? (
        <Confirm
          title={`Revoke the invitation of ${revoking.email}?`}
          action="Revoke"
          busy={action.busy}
          onClose={() => setRevoking(null)}
          onConfirm={() =>
            void action.run(
              () =>
                api.DELETE('/teams/{team_id}/invitations/{invitation_id}', {
                  params: { path: { team_id: teamId, invitation_id: revoking.id } },
                }),
              () => {
                setRevoking(null);
                revoked();
              },
            )
          }
        >
          <p>Its link stops working. You can invite the address again later.</p>
          {action.error ? <ErrorBox error={action.error} /> : null}
        </Confirm>
      ) : null}
    </>
  );
}
