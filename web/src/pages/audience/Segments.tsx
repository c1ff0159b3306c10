// Segments: the team's segments, newest first, each opening its editor; members make new ones.
import { Link } from 'react-router';
import { api } from '../../api/client';
import { formatTime } from '../../time';
import { Empty, Shown, useLoad } from '../../ui';
import { Pager, useCursor, useMember } from './common';

export default function Segments() {
  const member = useMember();
  const { after, before, go } = useCursor();
  const [list] = useLoad(
    () =>
      api.GET('/segments', {
        params: { query: { limit: '50', ...(after ? { after } : {}), ...(before ? { before } : {}) } },
      }),
    [after, before],
  );
  return (
    <>
      <div className="heading-row">
        <h1>Segments</h1>
        {member ? (
          <Link className="button" to="/dashboard/segments/new">
            New segment
          </Link>
        ) : null}
      </div>
      <Shown load={list} what="segments">
        {(l) =>
          l.data.length === 0 ? (
            <Empty>No segments yet. A segment groups contacts by hand or by a filter, for broadcasts.</Empty>
          ) : (
            <>
              <div className="table-wrap">
                <table id="segments-table">
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Created</th>
                      <th scope="col">Members</th>
                    </tr>
                  </thead>
                  <tbody>
                    {l.data.map((s) => (
                      <tr key={s.id}>
                        <td>
                          <Link to={`/dashboard/segments/${s.id}`}>{s.name}</Link>
                        </td>
                        <td>{formatTime(s.created_at)}</td>
                        <td>
                          <Link to={`/dashboard/contacts?segment=${s.id}`} aria-label={`Contacts of ${s.name}`}>
                            Contacts
                          </Link>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager ids={l.data.map((s) => s.id)} hasMore={l.has_more} after={after} before={before} go={go} />
            </>
          )
        }
      </Shown>
    </>
  );
}
