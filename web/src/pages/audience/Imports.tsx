// CSV imports: the upload (members: ./ImportUpload.tsx) and the team's imports, newest first; once stored, the
// import's page follows its progress.
import { Link } from 'react-router';
import { api, type Schemas } from '../../api/client';
import { formatTime } from '../../time';
import { Empty, Shown, useLoad } from '../../ui';
import { Pager, useCursor, useMember } from './common';
import { Upload } from './ImportUpload';

export default function Imports() {
  const member = useMember();
  const { after, before, go } = useCursor();
  const [list] = useLoad(
    () =>
      api.GET('/contacts/imports', {
        params: { query: { limit: '20', ...(after ? { after } : {}), ...(before ? { before } : {}) } },
      }),
    [after, before],
  );
  return (
    <>
      <p className="crumbs">
        <Link to="/dashboard/contacts">Contacts</Link>
      </p>
      <h1>Imports</h1>
      {member ? <Upload /> : null}
      <h2>Past imports</h2>
      <Shown load={list} what="imports">
        {(l) =>
          l.data.length === 0 ? (
            <Empty>No imports yet.</Empty>
          ) : (
            <>
              <ImportTable rows={l.data} />
              <Pager ids={l.data.map((i) => i.id)} hasMore={l.has_more} after={after} before={before} go={go} />
            </>
          )
        }
      </Shown>
    </>
  );
}

function ImportTable({ rows }: { rows: Schemas['ContactImport'][] }) {
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">Status</th>
            <th scope="col">Rows</th>
            <th scope="col" className="wide-only">
              Created / updated / skipped / failed
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((i) => (
            <tr key={i.id}>
              <td>
                <Link to={`/dashboard/contacts/imports/${i.id}`}>{formatTime(i.created_at)}</Link>
              </td>
              <td>
                <span className={`badge ${i.status}`}>{i.status.replace('_', ' ')}</span>
              </td>
              <td>{i.counts.total.toLocaleString()}</td>
              <td className="wide-only">
                {[i.counts.created, i.counts.updated, i.counts.skipped, i.counts.failed]
                  .map((n) => n.toLocaleString())
                  .join(' / ')}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
