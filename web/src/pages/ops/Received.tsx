// Received mail: the team's inbound messages, newest first, searched by the api (subject, sender, any recipient) and
// limited to a date window; a page at a time. The search is in the URL, so a search is a link.
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api } from '../../api/client';
import { formatTime } from '../../time';
import { Empty, Shown, useLoad, Pager } from '../../ui';

const PAGE = 50;

export function Received() {
  const [params, setParams] = useSearchParams();
  const search = params.get('q') ?? '';
  const [from, to] = [params.get('from') ?? '', params.get('to') ?? ''];
  const [after, setAfter] = useState<string[]>([]);
  const cursor = after.at(-1);
  const [load] = useLoad(
    () =>
      api.GET('/emails/receiving', {
        params: {
          query: {
            limit: String(PAGE),
            ...(cursor ? { after: cursor } : {}),
            ...(search ? { search } : {}),
            ...(from ? { start_date: from } : {}),
            ...(to ? { end_date: to } : {}),
          },
        },
      }),
    [cursor, search, from, to],
  );
  return (
    <>
      <h1>Received mail</h1>
      <SearchForm
        search={search}
        from={from}
        to={to}
        go={(next) => {
          setAfter([]);
          setParams(next);
        }}
      />
      <Shown load={load} what="received mail">
        {(list) =>
          list.data.length === 0 ? (
            search || from || to ? (
              <Empty>No received message matches.</Empty>
            ) : (
              <Empty>No mail received yet. Enable receiving on a domain and point its MX at the platform.</Empty>
            )
          ) : (
            <>
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Subject</th>
                      <th scope="col">From</th>
                      <th scope="col" className="wide-only">
                        To
                      </th>
                      <th scope="col">Received</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.data.map((m) => (
                      <tr key={m.id}>
                        <td>
                          <Link to={`/dashboard/received/${m.id}`}>{m.subject || '(no subject)'}</Link>
                          {m.dropped_reason ? (
                            <>
                              {' '}
                              <span className="badge failed">not kept</span>
                            </>
                          ) : null}
                          {m.attachments.length ? (
                            <span className="muted"> · {m.attachments.length} attached</span>
                          ) : null}
                        </td>
                        <td className="url">{m.from}</td>
                        <td className="wide-only url">{m.to.join(', ')}</td>
                        <td>{formatTime(m.created_at)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              {after.length === 0 && !list.has_more ? null : <Pager after={after} setAfter={setAfter} list={list} />}
            </>
          )
        }
      </Shown>
    </>
  );
}

function SearchForm(props: { search: string; from: string; to: string; go: (next: URLSearchParams) => void }) {
  const { search, from, to, go } = props;
  return (
    <form
      className="toolbar"
      role="search"
      id="received-search"
      onSubmit={(e) => {
        e.preventDefault();
        const f = new FormData(e.currentTarget);
        const next = new URLSearchParams();
        for (const k of ['q', 'from', 'to']) if (String(f.get(k) ?? '')) next.set(k, String(f.get(k)));
        go(next);
      }}
    >
      <label className="field">
        <span>Search</span>
        <input name="q" type="search" defaultValue={search} placeholder="Subject, sender or recipient" />
      </label>
      <label className="field">
        <span>From date</span>
        <input name="from" type="date" defaultValue={from} />
      </label>
      <label className="field">
        <span>To date</span>
        <input name="to" type="date" defaultValue={to} />
      </label>
      <button type="submit">Search</button>
    </form>
  );
}
