// The signed-in person's sessions (browsers): where and when, revoking one, or every one but this.
import { api, type Schemas } from '../../api/client';
import { formatTime } from '../../time';
import { Empty, ErrorBox, Shown, useLoad } from '../../ui';
import { useAction } from './common';
import { describeAgent } from './user-agent';

type UserSession = Schemas['UserSession'];

export function Sessions() {
  const [list, reload] = useLoad(() => api.GET('/auth/sessions'), []);
  const action = useAction();
  const revoke = (ids: string[]) =>
    action.run(async () => {
      let last;
      for (const id of ids) {
        last = await api.DELETE('/auth/sessions/{session_id}', { params: { path: { session_id: id } } });
        if (!last.response.ok) break;
      }
      return last!;
    }, reload);
  return (
    <>
      <h1>Sessions</h1>
      <p>The browsers signed in to your account. Signing one out ends it at once.</p>
      {action.error ? <ErrorBox error={action.error} /> : null}
      <Shown load={list} what="your sessions">
        {(l) => {
          const others = l.data.filter((s) => !s.current);
          return (
            <>
              {others.length > 0 ? (
                <p>
                  <button
                    type="button"
                    className="secondary danger"
                    id="revoke-others"
                    disabled={action.busy}
                    onClick={() => void revoke(others.map((s) => s.id))}
                  >
                    Sign out every other session ({others.length})
                  </button>
                </p>
              ) : (
                <Empty>No other session: only this browser is signed in.</Empty>
              )}
              <SessionTable sessions={l.data} busy={action.busy} revoke={(id) => void revoke([id])} />
            </>
          );
        }}
      </Shown>
    </>
  );
}

function SessionTable(props: { sessions: UserSession[]; busy: boolean; revoke: (id: string) => void }) {
  return (
    <div className="table-wrap">
      <table className="stack">
        <thead>
          <tr>
            <th scope="col">Browser</th>
            <th scope="col" className="wide-only">
              Address
            </th>
            <th scope="col">Last seen</th>
            <th scope="col" className="wide-only">
              Signed in
            </th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {props.sessions.map((s) => (
            <tr key={s.id}>
              <td className="agent">
                {s.user_agent ? <span title={s.user_agent}>{describeAgent(s.user_agent)}</span> : 'Unknown browser'}
                {s.current ? <span className="badge verified">this browser</span> : null}
              </td>
              <td className="wide-only">{s.ip ?? '—'}</td>
              <td>{formatTime(s.last_seen_at)}</td>
              <td className="wide-only">{formatTime(s.created_at)}</td>
              <td>
                {s.current ? null : (
                  <button
                    type="button"
                    className="small danger"
                    disabled={props.busy}
                    aria-label={`Sign out the session last seen ${formatTime(s.last_seen_at)}`}
                    onClick={() => props.revoke(s.id)}
                  >
                    Sign out
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
