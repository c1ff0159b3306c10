// Sent emails, newest first, a page at a time, searched by the api (GET /emails `search`: subject, sender or any
// recipient, over every email of the team); the search and the page are in the URL, so a search is a link. Members
// and admins send one from here (./SendEmail.tsx).
import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../api/client';
import { can, useSession } from '../session';
import { formatTime } from '../time';
import { Empty, Shown, useLoad } from '../ui';
import { Pager, useCursor } from './audience/common';
import { SendEmail } from './SendEmail';

const PAGE = 50;

export function Emails() {
  const { load: session } = useSession();
  const member = session.state === 'ready' && can(session.data.role, 'member');
  const { params, after, before, go } = useCursor();
  const search = params.get('search') ?? undefined;
  const [load, reload] = useLoad(
    () =>
      api.GET('/emails', {
        params: {
          query: {
            limit: String(PAGE),
            ...(after ? { after } : {}),
            ...(before ? { before } : {}),
            ...(search ? { search } : {}),
          },
        },
      }),
    [after, before, search],
  );
  return (
    <>
      <h1>Emails</h1>
      {member ? <SendEmail sent={() => (after || before || search ? go({ search: undefined }) : reload())} /> : null}
      <SearchForm key={search ?? ''} search={search} go={go} />
      <Shown load={load} what="emails">
        {(list) =>
          list.data.length === 0 ? (
            search ? (
              <Empty>No email’s subject, sender or recipient contains “{search}”.</Empty>
            ) : (
              <Empty>
                No emails yet.{' '}
                {member ? 'Send one above, or with an API key (POST /emails).' : 'Emails the team sends show here.'}
              </Empty>
            )
          ) : (
            <>
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Subject</th>
                      <th scope="col" className="wide-only">
                        To
                      </th>
                      <th scope="col">Status</th>
                      <th scope="col">Sent</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.data.map((e) => (
                      <tr key={e.id}>
                        <td className="url">
                          <Link to={`/dashboard/emails/${e.id}`}>{e.subject || '(no subject)'}</Link>
                        </td>
                        <td className="wide-only url">{e.to.join(', ')}</td>
                        <td>
                          <span className={`badge ${e.last_event}`}>{e.last_event}</span>
                        </td>
                        <td>{formatTime(e.created_at)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager ids={list.data.map((e) => e.id)} hasMore={list.has_more} after={after} before={before} go={go} />
            </>
          )
        }
      </Shown>
    </>
  );
}

function SearchForm(props: { search?: string; go: (c: Record<string, string | undefined>) => void }) {
  const [q, setQ] = useState(props.search ?? '');
  return (
    <form
      className="toolbar"
      role="search"
      id="emails-search"
      onSubmit={(e) => {
        e.preventDefault();
        props.go({ search: q.trim() || undefined });
      }}
    >
      <label className="field search">
        <span>Search emails</span>
        <input
          type="search"
          value={q}
          maxLength={200}
          onChange={(e) => setQ(e.target.value)}
          placeholder="Subject, sender or recipient"
        />
      </label>
      <button type="submit">Search</button>
    </form>
  );
}
