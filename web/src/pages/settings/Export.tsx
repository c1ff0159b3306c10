// The team's export (admins): ask for an archive, follow it while the worker builds it, download it when ready.
import { useEffect } from 'react';
import { api, type Schemas } from '../../api/client';
import { formatTime } from '../../time';
import { Empty, ErrorBox, Shown } from '../../ui';
import { AdminsOnly, isAdmin, useAction, useCurrent, useQuietLoad } from './common';

type TeamExport = Schemas['TeamExport'];
const WORKING = new Set(['pending', 'running']);

/** The signed link names PUBLIC_BASE_URL; the page's own origin serves the same path (behind a proxy too). */
const sameOrigin = (url: string) => {
  const u = new URL(url, window.location.origin);
  return u.pathname + u.search;
};

function size(bytes: number | null): string {
  if (bytes === null) return '—';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function Export() {
  const current = useCurrent();
  if (!isAdmin(current))
    return (
      <>
        <h1>Export</h1>
        <AdminsOnly what="export the team's data" role={current.role} />
      </>
    );
  return <AdminExport teamId={current.teamId} />;
}

function AdminExport({ teamId }: { teamId: string }) {
  const [list, reload] = useQuietLoad(
    () => api.GET('/teams/{team_id}/exports', { params: { path: { team_id: teamId } } }),
    [teamId],
  );
  const ask = useAction();
  const working = list.state === 'ready' && list.data.data.some((e) => WORKING.has(e.status));
  useEffect(() => {
    if (!working) return;
    const timer = setTimeout(reload, 2000);
    return () => clearTimeout(timer);
  });
  return (
    <>
      <h1>Export</h1>
      <section className="panel">
        <p>
          An archive of the team&apos;s data: a JSON file per area, and a manifest of what was left out (secrets,
          message bodies and attachments). It is kept for 7 days.
        </p>
        {ask.error ? <ErrorBox error={ask.error} /> : null}
        <button
          type="button"
          id="request-export"
          disabled={ask.busy || working}
          onClick={() =>
            void ask.run(
              () => api.POST('/teams/{team_id}/exports', { params: { path: { team_id: teamId } }, body: {} }),
              reload,
            )
          }
        >
          {working ? 'An export is being built…' : 'Request an export'}
        </button>
      </section>
      <Shown load={list} what="exports">
        {(l) => (l.data.length === 0 ? <Empty>No exports yet.</Empty> : <ExportTable exports={l.data} />)}
      </Shown>
    </>
  );
}

function ExportTable({ exports }: { exports: TeamExport[] }) {
  return (
    <div className="table-wrap">
      <table className="stack">
        <thead>
          <tr>
            <th scope="col">Requested</th>
            <th scope="col">Status</th>
            <th scope="col" className="wide-only">
              Size
            </th>
            <th scope="col">Download</th>
          </tr>
        </thead>
        <tbody>
          {exports.map((e) => (
            <tr key={e.id}>
              <td>{formatTime(e.created_at)}</td>
              <td>
                <span className={`badge export-${e.status}`}>{e.status}</span>
                {e.truncated ? ' (truncated)' : ''}
              </td>
              <td className="wide-only">{size(e.bytes)}</td>
              <td>
                {e.download_url ? (
                  <a href={sameOrigin(e.download_url)} download>
                    Download the zip
                    <span className="visually-hidden"> of {formatTime(e.created_at)}</span>
                  </a>
                ) : e.status === 'completed' ? (
                  'expired'
                ) : (
                  '—'
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
