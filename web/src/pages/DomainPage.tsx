// A domain: the DNS records to publish, each with copy buttons and its own status, and verifying it.
import { useCallback, useEffect, useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, asApiError, type ApiError, type Schemas } from '../api/client';
import { can, useSession } from '../session';
import { formatTime } from '../time';
import { CopyButton, Empty, ErrorBox, Shown, useLoad, type Load } from '../ui';
import { AutoConfigure, BrandLogo, RotateDkim } from './ops/DomainExtras';
import { DomainSettings } from './ops/DomainSettings';

/** How often the page asks again while a record is pending (the worker checks pending records on its own). */
const POLL_MS = 5000;

export function DomainPage() {
  const { id = '' } = useParams();
  const { load: session } = useSession();
  const member = session.state === 'ready' && can(session.data.role, 'member');
  const [domain] = useLoad(() => api.GET('/domains/{domain_id}', { params: { path: { domain_id: id } } }), [id]);
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [shown, refresh] = usePolled(id, domain);
  async function verify() {
    setError(null);
    setNote(null);
    const r = await api.POST('/domains/{domain_id}/verify', { params: { path: { domain_id: id } } });
    if (!r.response.ok) return setError(asApiError(r.error, r.response.status));
    setNote('Verification started: the records are checked now and their status updates below.');
    refresh();
  }
  return (
    <>
      <p>
        <Link to="/dashboard/domains">← Domains</Link>
      </p>
      <Shown load={shown} what="the domain">
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
                <button type="button" className="secondary" onClick={refresh}>
                  Refresh status
                </button>
              </p>
            ) : null}
            {note ? <p role="status">{note}</p> : null}
            {error ? <ErrorBox error={error} /> : null}
            <h2>DNS records</h2>
            {polling(d) ? (
              <p className="muted" role="status">
                Records are being checked: their status updates here every few seconds.
              </p>
            ) : null}
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
                        <td data-label="Type">
                          {r.type}
                          {r.priority !== undefined ? ` ${r.priority}` : ''}
                        </td>
                        <td data-label="Name">
                          <code>{r.name}</code>{' '}
                          <CopyButton text={r.name} label={`Copy the ${r.record} record's name`} />
                        </td>
                        <td className="value" data-label="Value">
                          <code>{r.value}</code>{' '}
                          <CopyButton text={r.value} label={`Copy the ${r.record} record's value`} />
                        </td>
                        <td data-label="Status">
                          <span className={`badge ${r.status}`}>{r.status}</span>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            {!d.managed ? <DomainSettings domain={d} member={member} changed={refresh} /> : null}
            {member && !d.managed ? <RotateDkim domain={d} changed={refresh} /> : null}
            {member && !d.managed ? <AutoConfigure domain={d} changed={refresh} /> : null}
            {!d.managed ? <BrandLogo domain={d} member={member} changed={refresh} /> : null}
          </>
        )}
      </Shown>
    </>
  );
}

type Loaded = Load<Schemas['Domain']>;

/** A new domain's records are checked at once (not_started, then pending): asked again until each has a verdict. */
const polling = (d: Schemas['Domain']) =>
  !d.managed && d.records.some((r) => r.status === 'pending' || r.status === 'not_started');

/**
 * The domain as loaded, then asked again quietly (no loading state) every few seconds while a record is pending. An
 * ask that fails keeps the domain on screen with the failure beside it (`refreshError`, shown by Shown) until the
 * next answer.
 */
function usePolled(id: string, load: Loaded): [Loaded, () => void] {
  const [latest, setLatest] = useState<Schemas['Domain'] | null>(null);
  const [refreshError, setRefreshError] = useState<ApiError | undefined>(undefined);
  useEffect(() => (setLatest(null), setRefreshError(undefined)), [load]);
  const current = latest ?? (load.state === 'ready' ? load.data : null);
  const active = current !== null && polling(current);
  // Asks overlap (a poll, Verify's, Refresh status) and their answers can come back out of order: an older one is
  // dropped, so the page never goes back to a state the domain has left.
  const asked = useRef(0);
  const applied = useRef(0);
  const refresh = useCallback(() => {
    const n = ++asked.current;
    api
      .GET('/domains/{domain_id}', { params: { path: { domain_id: id } } })
      .then((r) => {
        if (n < applied.current) return;
        applied.current = n;
        if (!r.data) return setRefreshError(asApiError(r.error, r.response.status));
        setLatest(r.data);
        setRefreshError(undefined);
      })
      // Unanswered (the api unreachable): said so, and the next poll asks again.
      .catch((e) => n >= applied.current && setRefreshError(asApiError(e)));
  }, [id]);
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(refresh, POLL_MS);
    return () => clearInterval(timer);
  }, [refresh, active]);
  return [current ? { state: 'ready', data: current, refreshError } : load, refresh];
}
