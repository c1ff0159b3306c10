// OAuth grants (/dashboard/settings/oauth-grants): the access the team's members gave to applications (an MCP
// client, an app), with the scopes and, once revoked, when and why; an admin revokes one (its tokens stop at once).
import { useState } from 'react';
import { api, asApiError, type ApiError, type Schemas } from '../../api/client';
import { can, useSession } from '../../session';
import { formatTime } from '../../time';
import { Empty, ErrorBox, Shown, useLoad } from '../../ui';

type Grant = Schemas['OAuthGrant'];

function Status({ grant }: { grant: Grant }) {
  if (!grant.revoked_at) return <span>Active</span>;
  return (
    <span>
      Revoked {formatTime(grant.revoked_at)}
      {grant.revoked_reason ? ` (${grant.revoked_reason.replace(/_/g, ' ')})` : ''}
    </span>
  );
}

/** A few scopes inline; many folded under their count (a grant to an assistant often holds them all). */
function Scopes({ scopes }: { scopes: string[] }) {
  const list = scopes.map((s) => (
    <code key={s} className="scope">
      {s}
    </code>
  ));
  if (scopes.length <= 4) return <>{list}</>;
  return (
    <details>
      <summary>{scopes.length} scopes</summary>
      {list}
    </details>
  );
}

export function Grants() {
  const { load: session } = useSession();
  const admin = session.state === 'ready' && can(session.data.role, 'admin');
  const [list, reload] = useLoad(() => api.GET('/oauth/grants', { params: { query: { limit: '100' } } }), []);
  const [error, setError] = useState<ApiError | null>(null);
  async function revoke(g: Grant) {
    setError(null);
    const r = await api.DELETE('/oauth/grants/{id}', { params: { path: { id: g.id } } });
    if (r.response.ok) reload();
    else setError(asApiError(r.error, r.response.status));
  }
  return (
    <>
      <h1>OAuth grants</h1>
      <p>Applications your team allowed in, such as AI assistants through the MCP server.</p>
      {error ? <ErrorBox error={error} /> : null}
      <Shown load={list} what="OAuth grants">
        {(l) =>
          l.data.length === 0 ? (
            <Empty>No application has been granted access yet.</Empty>
          ) : (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Application</th>
                    <th scope="col">Scopes</th>
                    <th scope="col" className="wide-only">
                      Granted
                    </th>
                    <th scope="col">Status</th>
                    {admin ? <th scope="col">Actions</th> : null}
                  </tr>
                </thead>
                <tbody>
                  {l.data.map((g) => (
                    <tr key={g.id}>
                      <td>{g.client.name ?? g.client_id}</td>
                      <td>
                        <Scopes scopes={g.scopes} />
                      </td>
                      <td className="wide-only">{formatTime(g.created_at)}</td>
                      <td>
                        <Status grant={g} />
                      </td>
                      {admin ? (
                        <td>
                          {g.revoked_at ? null : (
                            <button
                              type="button"
                              className="small danger"
                              aria-label={`Revoke ${g.client.name ?? g.client_id}`}
                              onClick={() => void revoke(g)}
                            >
                              Revoke
                            </button>
                          )}
                        </td>
                      ) : null}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Shown>
    </>
  );
}
