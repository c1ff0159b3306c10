// The members and their roles: admins change a role and remove a member (the api keeps the last admin).
import { useState } from 'react';
import { api, type Schemas } from '../../api/client';
import { Confirm } from '../../dialog';
import { useSession, type Role } from '../../session';
import { formatTime } from '../../time';
import { Empty, ErrorBox, Shown, useLoad } from '../../ui';
import { AdminsOnly, isAdmin, useAction, useCurrent } from './common';

type Member = Schemas['TeamMember'];
const ROLES: Role[] = ['admin', 'member', 'viewer'];

export function Members() {
  const current = useCurrent();
  const [list, reload] = useLoad(
    () => api.GET('/teams/{team_id}/members', { params: { path: { team_id: current.teamId } } }),
    [current.teamId],
  );
  const admin = isAdmin(current);
  return (
    <>
      <h1>Members</h1>
      {admin ? null : <AdminsOnly what="change roles and remove members" role={current.role} />}
      <Shown load={list} what="members">
        {(l) =>
          l.data.length === 0 ? (
            <Empty>No members.</Empty>
          ) : (
            <MemberTable members={l.data} admin={admin} me={current.userId} changed={reload} />
          )
        }
      </Shown>
    </>
  );
}

function MemberTable(props: { members: Member[]; admin: boolean; me: string; changed: () => void }) {
  const [removing, setRemoving] = useState<Member | null>(null);
  const action = useAction();
  const current = useCurrent();
  return (
    <>
      {action.error && !removing ? <ErrorBox error={action.error} /> : null}
      <div className="table-wrap">
        <table className="stack">
          <thead>
            <tr>
              <th scope="col">Member</th>
              <th scope="col">Role</th>
              <th scope="col" className="wide-only">
                Two-factor
              </th>
              <th scope="col" className="wide-only">
                Since
              </th>
              {props.admin ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {props.members.map((m) => (
              <tr key={m.id}>
                <td>
                  {m.name ? <div>{m.name}</div> : null}
                  <div className="muted">
                    {m.email}
                    {m.user_id === props.me ? ' (you)' : ''}
                  </div>
                </td>
                <td>
                  {props.admin ? (
                    <RoleForm member={m} run={action.run} changed={props.changed} />
                  ) : (
                    <span className="badge">{m.role}</span>
                  )}
                </td>
                <td className="wide-only">{m.mfa_enabled ? 'on' : 'off'}</td>
                <td className="wide-only">{formatTime(m.created_at)}</td>
                {props.admin ? (
                  <td>
                    <button
                      type="button"
                      className="small danger"
                      aria-label={`Remove ${m.email}`}
                      onClick={() => {
                        action.clear();
                        setRemoving(m);
                      }}
                    >
                      Remove
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {removing ? (
        <Confirm
          title={`Remove ${removing.email}?`}
          action="Remove"
          busy={action.busy}
          onClose={() => setRemoving(null)}
          onConfirm={() =>
            void action.run(
              () =>
                api.DELETE('/teams/{team_id}/members/{member_id}', {
                  params: { path: { team_id: current.teamId, member_id: removing.id } },
                }),
              () => {
                setRemoving(null);
                props.changed();
              },
            )
          }
        >
          <p>They lose access to the team at once; their sessions leave it.</p>
          {action.error ? <ErrorBox error={action.error} /> : null}
        </Confirm>
      ) : null}
    </>
  );
}

function RoleForm(props: { member: Member; run: ReturnType<typeof useAction>['run']; changed: () => void }) {
  const current = useCurrent();
  const { reload } = useSession();
  const m = props.member;
  const [role, setRole] = useState<Role>(m.role);
  return (
    <form
      className="role-form"
      onSubmit={(e) => {
        e.preventDefault();
        void props.run(
          () =>
            api.PATCH('/teams/{team_id}/members/{member_id}', {
              params: { path: { team_id: current.teamId, member_id: m.id } },
              body: { role },
            }),
          // One's own role changed: the whole frame follows (the actions it shows).
          m.user_id === current.userId ? reload : props.changed,
        );
      }}
    >
      <select aria-label={`Role of ${m.email}`} value={role} onChange={(e) => setRole(e.target.value as Role)}>
        {ROLES.map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
      <button type="submit" className="small" disabled={role === m.role} aria-label={`Save the role of ${m.email}`}>
        Save
      </button>
    </form>
  );
}
