// Broadcasts: the list, newest first (name, status, audience, counts, scheduled or sent time in the browser's
// timezone), paged with the Pager; "New broadcast" opens the composer. Members and admins compose; a viewer reads.
import { useState } from 'react';
import { Link } from 'react-router';
import { api, type Schemas } from '../../api/client';
import { can, useSession } from '../../session';
import { formatTime } from '../../time';
import { Empty, Pager, Shown, useLoad } from '../../ui';
import { useNames, type Names } from './names';
import './broadcasts.css';

type Item = Schemas['BroadcastListItem'];

export default function Broadcasts() {
  const { load: session } = useSession();
  const member = session.state === 'ready' && can(session.data.role, 'member');
  const [after, setAfter] = useState<string[]>([]);
  const cursor = after[after.length - 1];
  const [list] = useLoad(
    () => api.GET('/broadcasts', { params: { query: { limit: '20', ...(cursor ? { after: cursor } : {}) } } }),
    [cursor],
  );
  const names = useNames();
  return (
    <>
      <div className="page-head">
        <h1>Broadcasts</h1>
        {member ? (
          <Link className="button" to="/dashboard/broadcasts/new">
            New broadcast
          </Link>
        ) : null}
      </div>
      <Shown load={list} what="broadcasts">
        {(page) =>
          page.data.length === 0 && after.length === 0 ? (
            <Empty>
              No broadcasts yet.{member ? ' A broadcast sends one message to a segment of your contacts.' : ''}
            </Empty>
          ) : (
            <>
              <BroadcastTable items={page.data} names={names} />
              <Pager after={after} setAfter={setAfter} list={page} />
            </>
          )
        }
      </Shown>
    </>
  );
}

function BroadcastTable({ items, names }: { items: Item[]; names: Names }) {
  return (
    <div className="table-wrap">
      <table className="broadcasts">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            <th scope="col" className="wide-only">
              Audience
            </th>
            <th scope="col">Counts</th>
            <th scope="col" className="wide-only">
              Scheduled or sent
            </th>
          </tr>
        </thead>
        <tbody>
          {items.map((b) => (
            <tr key={b.id}>
              <td>
                <Link to={`/dashboard/broadcasts/${b.id}`}>{b.name || '(no name)'}</Link>
              </td>
              <td>
                <span className={`badge ${b.status}`}>{b.status}</span>
              </td>
              <td className="wide-only">{audienceOf(b, names)}</td>
              <td>{b.status === 'draft' ? '—' : <RowCounts id={b.id} />}</td>
              <td className="wide-only">{when(b)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function audienceOf(
  b: { segment_id: string | null; audience_id: string | null; topic_id: string | null },
  names: Names,
) {
  const segment = b.segment_id ?? b.audience_id;
  const s = segment ? (names.segments.get(segment) ?? 'a deleted segment') : 'no segment';
  return b.topic_id ? `${s} · ${names.topics.get(b.topic_id) ?? 'a deleted topic'}` : s;
}

function when(b: Item): string {
  if (b.sent_at) return `Sent ${formatTime(b.sent_at)}`;
  if (b.scheduled_at) return `Scheduled ${formatTime(b.scheduled_at)}`;
  return '—';
}

/** A sent (or sending) broadcast's counts: its own GET, as the list answers none. */
function RowCounts({ id }: { id: string }) {
  const [one] = useLoad(() => api.GET('/broadcasts/{id}', { params: { path: { id } } }), [id]);
  if (one.state !== 'ready') return <span className="hint">{one.state === 'loading' ? '…' : '—'}</span>;
  const c = one.data.counts;
  return (
    <span className="counts-line">
      {c.recipients} sent · {c.delivered} delivered · {c.opened} opened · {c.clicked} clicked
    </span>
  );
}
