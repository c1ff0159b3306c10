// A domain: the DNS records to publish, each with copy buttons and its own status, and verifying it.
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, asApiError, type ApiError } from '../api/client';
import { can, useSession } from '../session';
import { formatTime } from '../time';
import { CopyButton, Empty, ErrorBox, Shown, useLoad } from '../ui';

export function DomainPage() {
  const { id = '' } = useParams();
  const { load: session } = useSession();
  const member = session.state === 'ready' && can(session.data.role, 'member');
  const [domain, reload] = useLoad(
    () => api.GET('/domains/{domain_id}', { params: { path: { domain_id: id } } }),
    [id],
  );
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  async function verify() {
    setError(null);
    setNote(null);
    const r = await api.POST('/domains/{domain_id}/verify', { params: { path: { domain_id: id } } });
    if (!r.response.ok) return setError(asApiError(r.error, r.response.status));
    setNote('Verification started: the records are checked now and their status updates below.');
    reload();
  }
  return (
    <>
      <p>
        <Link to="/dashboard/domains">← Domains</Link>
      </p>
      <Shown load={domain} what="the domain">
        {(d) => (
          <>
            <h1>{d.name}</h1>
            <p>
              <span className={`badge ${d.status}`}>{d.status}</span> · {d.region} · added {formatTime(d.created_at)}
            </p>
            {member && !d.managed ? (
              <p>
                <button type="button" onClick={() => void verify()}>
                  Verify DNS records
                </button>{' '}
                <button type="button" className="secondary" onClick={reload}>
                  Refresh status
                </button>
              </p>
            ) : null}
            {note ? <p role="status">{note}</p> : null}
            {error ? <ErrorBox error={error} /> : null}
            <h2>DNS records</h2>
            {d.records.length === 0 ? (
              <Empty>This domain has no records to publish.</Empty>
            ) : (
              <div className="table-wrap">
                <table className="records">
                  <thead>
                    <tr>
                      <th scope="col">Type</th>
                      <th scope="col">Name</th>
                      <th scope="col">Value</th>
                      <th scope="col">Status</th>
                    </tr>
                  </thead>
                  <tbody>
                    {d.records.map((r, i) => (
                      <tr key={i}>
                        <td>
                          {r.type}
                          {r.priority !== undefined ? ` ${r.priority}` : ''}
                        </td>
                        <td>
                          <code>{r.name}</code>{' '}
                          <CopyButton text={r.name} label={`Copy the ${r.record} record's name`} />
                        </td>
                        <td className="value">
                          <code>{r.value}</code>{' '}
                          <CopyButton text={r.value} label={`Copy the ${r.record} record's value`} />
                        </td>
                        <td>
                          <span className={`badge ${r.status}`}>{r.status}</span>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </>
        )}
      </Shown>
    </>
  );
}
