// One import: a progress bar that follows its counts (asked again every second until it ends), then its failed
// rows with their row numbers and reasons.
import { useEffect, useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, type Schemas } from '../../api/client';
import { formatTime } from '../../time';
import { Empty, ErrorBox, Shown, useLoad } from '../../ui';

const POLL_MS = 1000;
const done = (s: Schemas['ContactImport']['status']) => s === 'completed' || s === 'failed';

export default function ImportPage() {
  const { id = '' } = useParams();
  const [tick, setTick] = useState(0);
  const [imp] = useLoad(() => api.GET('/contacts/imports/{id}', { params: { path: { id } } }), [id, tick]);
  // The last answer stays on screen while the next one is asked (no flicker to "Loading…" every second).
  const [shown, setShown] = useState<Schemas['ContactImport'] | null>(null);
  useEffect(() => {
    if (imp.state === 'ready') setShown(imp.data);
  }, [imp]);
  // Asked again after each answer until the import ends; a failed ask (a moment's outage) is shown and asked again.
  const status = imp.state === 'ready' ? imp.data.status : shown?.id === id ? shown.status : null;
  useEffect(() => {
    if (imp.state === 'loading' || status === null || done(status)) return;
    const t = setTimeout(() => setTick((n) => n + 1), POLL_MS);
    return () => clearTimeout(t);
  }, [status, tick, imp.state]);
  return (
    <>
      <p className="crumbs">
        <Link to="/dashboard/contacts">Contacts</Link> › <Link to="/dashboard/contacts/imports">Imports</Link>
      </p>
      <h1>Import</h1>
      {shown && shown.id === id ? (
        <Progress imp={shown} />
      ) : (
        <Shown load={imp} what="the import">
          {() => null}
        </Shown>
      )}
      {imp.state === 'error' && shown ? <ErrorBox error={imp.error} /> : null}
      {status && done(status) ? <Failures id={id} /> : null}
    </>
  );
}

function Progress({ imp }: { imp: Schemas['ContactImport'] }) {
  const { total, created, updated, skipped, failed } = imp.counts;
  const read = created + updated + skipped + failed;
  const percent = total > 0 ? Math.floor((read / total) * 100) : imp.status === 'completed' ? 100 : 0;
  return (
    <section className="panel" aria-labelledby="progress-h">
      <h2 id="progress-h">
        <span className={`badge ${imp.status}`} id="import-status">
          {imp.status.replace('_', ' ')}
        </span>{' '}
        {read.toLocaleString()} of {total.toLocaleString()} rows
      </h2>
      <progress id="import-progress" max={100} value={percent} aria-label="Rows imported">
        {percent} %
      </progress>
      <dl className="facts counts">
        <dt>Created</dt>
        <dd id="count-created">{created.toLocaleString()}</dd>
        <dt>Updated</dt>
        <dd>{updated.toLocaleString()}</dd>
        <dt>Skipped</dt>
        <dd>{skipped.toLocaleString()}</dd>
        <dt>Failed</dt>
        <dd id="count-failed">{failed.toLocaleString()}</dd>
        <dt>Started</dt>
        <dd>{formatTime(imp.created_at)}</dd>
        <dt>Ended</dt>
        <dd>{formatTime(imp.completed_at)}</dd>
      </dl>
    </section>
  );
}

function Failures({ id }: { id: string }) {
  const [f] = useLoad(() => api.GET('/contacts/imports/{id}/failures', { params: { path: { id } } }), [id]);
  return (
    <section className="panel" aria-labelledby="failures-h">
      <h2 id="failures-h">Failed rows</h2>
      <Shown load={f} what="the failed rows">
        {(l) => (
          <>
            {l.error ? (
              <p role="alert" className="error">
                {l.error}
              </p>
            ) : null}
            {l.data.length === 0 ? (
              <Empty>No row failed.</Empty>
            ) : (
              <div className="table-wrap">
                {l.failed > l.data.length ? (
                  <p className="hint">
                    The first {l.data.length.toLocaleString()} of {l.failed.toLocaleString()} failed rows.
                  </p>
                ) : null}
                <table id="failures-table">
                  <thead>
                    <tr>
                      <th scope="col">Row</th>
                      <th scope="col">Address</th>
                      <th scope="col">Why</th>
                    </tr>
                  </thead>
                  <tbody>
                    {l.data.map((r) => (
                      <tr key={r.row}>
                        <td>{r.row}</td>
                        <td className="address">{r.email ?? '—'}</td>
                        <td>{r.reason}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </>
        )}
      </Shown>
    </section>
  );
}
