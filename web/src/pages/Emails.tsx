// Sent emails, newest first, a page at a time; the search narrows the loaded page by subject, sender or recipient.
import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../api/client';
import { formatTime } from '../time';
import { Empty, Shown, useLoad, Pager } from '../ui';

const PAGE = 50;

export function Emails() {
  const [after, setAfter] = useState<string[]>([]);
  const cursor = after.at(-1);
  const [load] = useLoad(
    () => api.GET('/emails', { params: { query: { limit: String(PAGE), ...(cursor ? { after: cursor } : {}) } } }),
    [cursor],
  );
  const [q, setQ] = useState('');
  return (
    <>
      <h1>Emails</h1>
      <label className="field search">
        <span>Search</span>
        <input
          type="search"
          value={q}
          onChange={(e) => setQ(e.target.value)}
          placeholder="Subject, sender or recipient"
        />
      </label>
      <Shown load={load} what="emails">
        {(list) => {
          const needle = q.trim().toLowerCase();
          const rows = list.data.filter(
            (e) => !needle || [e.subject, e.from, ...e.to].some((s) => s.toLowerCase().includes(needle)),
          );
          if (list.data.length === 0)
            return <Empty>No emails yet. Send one with an API key (POST /emails) and it shows here.</Empty>;
          return (
            <>
              {rows.length === 0 ? (
                <Empty>No email on this page matches “{q}”.</Empty>
              ) : (
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
                      {rows.map((e) => (
                        <tr key={e.id}>
                          <td>
                            <Link to={`/dashboard/emails/${e.id}`}>{e.subject || '(no subject)'}</Link>
                          </td>
                          <td className="wide-only">{e.to.join(', ')}</td>
                          <td>
                            <span className={`badge ${e.last_event}`}>{e.last_event}</span>
                          </td>
                          <td>{formatTime(e.created_at)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
              {after.length === 0 && !list.has_more ? null : <Pager after={after} setAfter={setAfter} list={list} />}
            </>
          );
        }}
      </Shown>
    </>
  );
}
