// One received message: who sent it to whom, how the MX authenticated it (SPF, DKIM, DMARC, ARC), why it was not
// kept when it was dropped, its HTML in a sandboxed frame (or its text), its headers, its attachments with their
// signed download links, the raw message's download, and deleting it (members and admins).
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, asApiError, type ApiError, type Schemas } from '../../api/client';
import { useConfirm } from '../../dialog';
import { can, useSession } from '../../session';
import { formatTime } from '../../time';
import { Empty, ErrorBox, Shown, useLoad } from '../../ui';
import { EmailFrame } from '../EmailFrame';
import { AuthVerdicts } from './auth-results';
import { here } from './links';

export function ReceivedPage() {
  const { id = '' } = useParams();
  const path = { params: { path: { email_id: id } } };
  const [email] = useLoad(() => api.GET('/emails/receiving/{email_id}', path), [id]);
  return (
    <>
      <p>
        <Link to="/dashboard/received">← Received mail</Link>
      </p>
      <Shown load={email} what="the message">
        {(m) => <Message m={m} />}
      </Shown>
    </>
  );
}

type Dropped = NonNullable<Schemas['ReceivedEmail']['dropped_reason']>;

/** Why the receive job kept only a message's header fields (and, parse_failed, its raw source). */
const DROPPED: Record<Dropped, string> = {
  parse_failed: 'Its MIME could not be parsed (the raw message is kept)',
  no_mailbox: 'No mailbox of the team serves its recipients any more',
  team_blocked: 'The team is suspended or being deleted',
  virus: 'The virus scan found malware in it',
  daily_cap: "It came past the team's daily cap of received messages",
  storage_quota: "It came past the team's storage allowance for received mail",
};

function Message({ m }: { m: Schemas['ReceivedEmail'] }) {
  const { load: session } = useSession();
  const member = session.state === 'ready' && can(session.data.role, 'member');
  return (
    <>
      <h1>{m.subject || '(no subject)'}</h1>
      <dl className="facts">
        <dt>From</dt>
        <dd>{m.from}</dd>
        <dt>To</dt>
        <dd>{m.to.join(', ') || '—'}</dd>
        {m.cc.length ? (
          <>
            <dt>Cc</dt>
            <dd>{m.cc.join(', ')}</dd>
          </>
        ) : null}
        <dt>Received for</dt>
        <dd>{m.received_for.join(', ')}</dd>
        <dt>Received</dt>
        <dd>{formatTime(m.created_at)}</dd>
        <dt>Message-ID</dt>
        <dd>
          <code>{m.message_id || '—'}</code>
        </dd>
        <AuthVerdicts headers={m.headers} />
        {m.dropped_reason ? (
          <>
            <dt>Kept</dt>
            <dd id="dropped">
              <span className="badge failed">not kept</span> {DROPPED[m.dropped_reason]}. Its body and attachments were
              dropped.
            </dd>
          </>
        ) : null}
      </dl>
      <p className="actions">
        {m.raw ? (
          <a className="button secondary" href={here(m.raw.download_url)} download="raw.eml">
            Download the raw message
          </a>
        ) : (
          <span className="muted">The raw message is not kept.</span>
        )}
        {member ? <Delete id={m.id} /> : null}
      </p>
      <h2>Content</h2>
      {m.html ? (
        <EmailFrame
          page={`/emails/receiving/${encodeURIComponent(m.id)}/html`}
          title="The message's HTML"
          html={m.html}
        />
      ) : m.text ? (
        <pre className="text-body">{m.text}</pre>
      ) : (
        <Empty>{m.dropped_reason ? 'Its body was not kept.' : 'This message has no body.'}</Empty>
      )}
      {m.html && m.text ? (
        <details>
          <summary>Text version</summary>
          <pre className="text-body">{m.text}</pre>
        </details>
      ) : null}
      <h2>Attachments</h2>
      {m.attachments.length ? <Attachments id={m.id} /> : <Empty>No attachments.</Empty>}
      <h2>Headers</h2>
      <details className="headers">
        <summary>{Object.keys(m.headers).length} header fields</summary>
        <div className="table-wrap">
          <table>
            <tbody>
              {Object.entries(m.headers).map(([k, v]) => (
                <tr key={k}>
                  <th scope="row">
                    <code>{k}</code>
                  </th>
                  <td className="value">
                    <code>{v}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </>
  );
}

/** Fresh signed links (15 minutes) each time the page loads. */
function Attachments({ id }: { id: string }) {
  const [list] = useLoad(
    () =>
      api.GET('/emails/receiving/{email_id}/attachments', {
        params: { path: { email_id: id }, query: { limit: '100' } },
      }),
    [id],
  );
  return (
    <Shown load={list} what="attachments">
      {(l) => (
        <ul className="attachments">
          {l.data.map((a) => (
            <li key={a.id}>
              {a.download_url ? (
                <a href={here(a.download_url)} download={a.filename ?? 'attachment'}>
                  {a.filename ?? '(unnamed)'}
                </a>
              ) : (
                <span>{a.filename ?? '(unnamed)'} (not stored)</span>
              )}{' '}
              <span className="muted">
                {a.content_type}, {formatBytes(a.size)}
              </span>
            </li>
          ))}
        </ul>
      )}
    </Shown>
  );
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function Delete({ id }: { id: string }) {
  const navigate = useNavigate();
  const [error, setError] = useState<ApiError | null>(null);
  const confirm = useConfirm();
  async function remove() {
    const sure = await confirm.ask('Delete this message for good?', 'Delete', 'Its attachments and raw source go too.');
    if (!sure) return;
    const r = await api.DELETE('/emails/receiving/{email_id}', { params: { path: { email_id: id } } });
    if (r.response.ok) navigate('/dashboard/received');
    else setError(asApiError(r.error, r.response.status));
  }
  return (
    <>
      <button type="button" className="secondary danger" onClick={() => void remove()}>
        Delete
      </button>
      {error ? <ErrorBox error={error} /> : null}
      {confirm.dialog}
    </>
  );
}
