// Request logs: the requests made with the team's credentials, newest first, a page at a time, filtered on the loaded
// page by method, status class and path (the api lists without filters); one log's request and response bodies.
import { useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { api, type Schemas } from '../../api/client';
import { formatTime } from '../../time';
import { Empty, Shown, useLoad, Pager } from '../../ui';

const PAGE = 100;
const METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'];
const CLASSES = ['2xx', '3xx', '4xx', '5xx'];

type Item = Schemas['LogListItem'];

function matches(l: Item, method: string, status: string, path: string): boolean {
  if (method && l.method !== method) return false;
  if (status && `${Math.floor(l.response_status / 100)}xx` !== status) return false;
  return !path || l.endpoint.toLowerCase().includes(path.toLowerCase());
}

export function Logs() {
  const [after, setAfter] = useState<string[]>([]);
  const cursor = after.at(-1);
  const [load, reload] = useLoad(
    () => api.GET('/logs', { params: { query: { limit: String(PAGE), ...(cursor ? { after: cursor } : {}) } } }),
    [cursor],
  );
  // The filters live in the URL, so a filtered view is a link.
  const [params, setParams] = useSearchParams();
  const [method, status, path] = ['method', 'status', 'path'].map((k) => params.get(k) ?? '');
  const set = (k: string, v: string) => {
    const next = new URLSearchParams(params);
    if (v) next.set(k, v);
    else next.delete(k);
    setParams(next, { replace: true });
  };
  return (
    <>
      <h1>Logs</h1>
      <div className="toolbar" role="search" aria-label="Filter the logs">
        <label className="field">
          <span>Method</span>
          <select value={method} onChange={(e) => set('method', e.target.value)}>
            <option value="">Any</option>
            {METHODS.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>Status</span>
          <select value={status} onChange={(e) => set('status', e.target.value)}>
            <option value="">Any</option>
            {CLASSES.map((c) => (
              <option key={c}>{c}</option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>Path contains</span>
          <input type="search" value={path} onChange={(e) => set('path', e.target.value)} placeholder="/emails" />
        </label>
        <button type="button" className="secondary" onClick={reload}>
          Refresh
        </button>
      </div>
      <Shown load={load} what="logs">
        {(list) => {
          if (list.data.length === 0 && after.length === 0)
            return <Empty>No requests yet. Requests made with the team's API keys show here.</Empty>;
          const rows = list.data.filter((l) => matches(l, method, status, path));
          return (
            <>
              {rows.length === 0 ? (
                <Empty>No request on this page matches the filters.</Empty>
              ) : (
                <LogTable rows={rows} />
              )}
              <Pager after={after} setAfter={setAfter} list={list} />
            </>
          );
        }}
      </Shown>
    </>
  );
}

function LogTable({ rows }: { rows: Item[] }) {
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Request</th>
            <th scope="col">Status</th>
            <th scope="col" className="wide-only">
              Duration
            </th>
            <th scope="col">When</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((l) => (
            <tr key={l.id}>
              <td className="url">
                <Link to={`/dashboard/logs/${l.id}`}>
                  {l.method} {l.endpoint}
                </Link>
              </td>
              <td>
                <span className={`badge ${statusClass(l.response_status)}`}>{l.response_status}</span>
              </td>
              <td className="wide-only">{l.duration_ms} ms</td>
              <td>{formatTime(l.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const statusClass = (s: number) => (s < 400 ? 'delivered' : s < 500 ? 'deferred' : 'failed');

export function LogPage() {
  const { id = '' } = useParams();
  const [log] = useLoad(() => api.GET('/logs/{id}', { params: { path: { id } } }), [id]);
  return (
    <>
      <p>
        <Link to="/dashboard/logs">← Logs</Link>
      </p>
      <Shown load={log} what="the request">
        {(l) => (
          <>
            <h1 className="url">
              {l.method} {l.endpoint}
            </h1>
            <dl className="facts">
              <dt>Status</dt>
              <dd>
                <span className={`badge ${statusClass(l.response_status)}`}>{l.response_status}</span>
              </dd>
              <dt>When</dt>
              <dd>{formatTime(l.created_at)}</dd>
              <dt>Duration</dt>
              <dd>{l.duration_ms} ms</dd>
              <dt>User agent</dt>
              <dd>{l.user_agent ?? '—'}</dd>
              <dt>Id</dt>
              <dd>
                <code>{l.id}</code>
              </dd>
            </dl>
            <h2>Request body</h2>
            <Body value={l.request_body} />
            <h2>Response body</h2>
            <Body value={l.response_body} />
          </>
        )}
      </Shown>
    </>
  );
}

function Body({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <Empty>No body.</Empty>;
  return <pre className="code-block">{typeof value === 'string' ? value : JSON.stringify(value, null, 2)}</pre>;
}
