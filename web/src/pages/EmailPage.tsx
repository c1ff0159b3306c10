// One email: its details, a timeline (accepted, scheduled, each delivery attempt with its SMTP transcript), each
// recipient's state from its latest attempt, and its HTML in a sandboxed frame (no scripts, no same-origin, the page's
// CSP inherited).
import { Link, useParams } from 'react-router';
import { api, type Schemas } from '../api/client';
import { formatTime } from '../time';
import { Empty, Shown, useLoad } from '../ui';
import { HtmlFrame } from './ops/HtmlFrame';

type Attempt = Schemas['DeliveryAttempt'];

export function EmailPage() {
  const { id = '' } = useParams();
  const [email] = useLoad(() => api.GET('/emails/{email_id}', { params: { path: { email_id: id } } }), [id]);
  const [attempts] = useLoad(
    () => api.GET('/emails/{email_id}/attempts', { params: { path: { email_id: id }, query: { limit: '100' } } }),
    [id],
  );
  return (
    <>
      <p>
        <Link to="/dashboard/emails">← Emails</Link>
      </p>
      <Shown load={email} what="the email">
        {(e) => (
          <>
            <h1>{e.subject || '(no subject)'}</h1>
            <dl className="facts">
              <dt>From</dt>
              <dd>{e.from}</dd>
              <dt>To</dt>
              <dd>{e.to.join(', ')}</dd>
              <dt>Status</dt>
              <dd>
                <span className={`badge ${e.last_event}`}>{e.last_event}</span>
              </dd>
              <dt>Id</dt>
              <dd>
                <code>{e.id}</code>
              </dd>
            </dl>
            <Shown load={attempts} what="delivery attempts">
              {(a) => <Delivery email={e} attempts={a.data} />}
            </Shown>
            <h2>Content</h2>
            {e.html ? (
              <HtmlFrame html={e.html} title="The email's HTML" />
            ) : e.text ? (
              <pre className="text-body">{e.text}</pre>
            ) : (
              <Empty>This email has no body stored.</Empty>
            )}
          </>
        )}
      </Shown>
    </>
  );
}

function Delivery({ email, attempts }: { email: Schemas['Email']; attempts: Attempt[] }) {
  const sorted = [...attempts].sort((a, b) => a.started_at.localeCompare(b.started_at));
  const latest = new Map<string, Attempt>();
  for (const a of sorted) for (const r of a.recipients) latest.set(r.toLowerCase(), a);
  const recipients = [...email.to, ...(email.cc ?? []), ...(email.bcc ?? [])];
  return (
    <>
      <h2>Timeline</h2>
      <ol className="timeline">
        <li>
          <time dateTime={email.created_at}>{formatTime(email.created_at)}</time> Accepted
        </li>
        {email.scheduled_at ? (
          <li>
            <time dateTime={email.scheduled_at}>{formatTime(email.scheduled_at)}</time> Scheduled for delivery
          </li>
        ) : null}
        {sorted.map((a) => (
          <li key={a.id}>
            <time dateTime={a.started_at}>{formatTime(a.started_at)}</time>{' '}
            <span className={`badge ${a.outcome}`}>{a.outcome}</span> to {a.domain} via {a.mx_host ?? 'no connection'}
            {a.response ? <span className="response"> — {a.response}</span> : null}
            {a.transcript ? (
              <details className="transcript">
                <summary>
                  SMTP transcript ({a.duration_ms} ms{a.tls ? ', TLS' : ''})
                </summary>
                <pre>{a.transcript}</pre>
              </details>
            ) : null}
          </li>
        ))}
        {sorted.length === 0 ? <li>No delivery attempt yet (now: {email.last_event}).</li> : null}
      </ol>
      <h2>Recipients</h2>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Recipient</th>
              <th scope="col">State</th>
              <th scope="col">Last attempt</th>
            </tr>
          </thead>
          <tbody>
            {recipients.map((r) => {
              const a = latest.get(r.toLowerCase());
              return (
                <tr key={r}>
                  <td>{r}</td>
                  <td>
                    <span className={`badge ${a?.outcome ?? 'queued'}`}>{a?.outcome ?? 'not attempted yet'}</span>
                  </td>
                  <td>{a ? formatTime(a.started_at) : '—'}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}
