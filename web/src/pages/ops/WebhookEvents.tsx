// An endpoint's events (newest first, a page at a time), its parked events with "deliver them again", and one event's
// page: its payload, its delivery attempts (status, response, error) and replay.
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, asApiError, type ApiError, type Schemas } from '../../api/client';
import { can, useSession } from '../../session';
import { formatTime } from '../../time';
import { Empty, ErrorBox, Shown, useLoad, Pager } from '../../ui';

const PAGE = 25;

export function EventList({ webhookId }: { webhookId: string }) {
  const [after, setAfter] = useState<string[]>([]);
  const cursor = after.at(-1);
  const [load, reload] = useLoad(
    () =>
      api.GET('/webhooks/{webhook_id}/events', {
        params: {
          path: { webhook_id: webhookId },
          query: { limit: String(PAGE), ...(cursor ? { after: cursor } : {}) },
        },
      }),
    [webhookId, cursor],
  );
  return (
    <section aria-labelledby="events-title">
      <h2 id="events-title">
        Events{' '}
        <button type="button" className="small" onClick={reload}>
          Refresh
        </button>
      </h2>
      <Shown load={load} what="events">
        {(l) =>
          l.data.length === 0 && after.length === 0 ? (
            <Empty>No events yet. Events of the chosen types show here as they are sent.</Empty>
          ) : (
            <>
              <EventTable webhookId={webhookId} rows={l.data} />
              <Pager after={after} setAfter={setAfter} list={l} />
            </>
          )
        }
      </Shown>
    </section>
  );
}

function EventTable(props: {
  webhookId: string;
  rows: (Schemas['WebhookEventListItem'] & { attempt_count?: number; last_http_status?: number | null })[];
}) {
  const parked = props.rows.some((r) => r.attempt_count !== undefined);
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Status</th>
            {parked ? <th scope="col">Attempts</th> : null}
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map((e) => (
            <tr key={e.id}>
              <td>
                <Link to={`/dashboard/webhooks/${props.webhookId}/events/${e.id}`}>{e.type}</Link>
              </td>
              <td>
                <span className={`badge ${e.status}`}>{e.status}</span>
              </td>
              {parked ? (
                <td>
                  {e.attempt_count}
                  {e.last_http_status ? ` (last HTTP ${e.last_http_status})` : ''}
                </td>
              ) : null}
              <td>{formatTime(e.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function Parked(props: { webhook: Schemas['WebhookDetail']; member: boolean }) {
  const path = { params: { path: { webhook_id: props.webhook.id } } };
  const [load, reload] = useLoad(
    () => api.GET('/webhooks/{webhook_id}/parked', { params: { ...path.params, query: { limit: '100' } } }),
    [props.webhook.id],
  );
  const [error, setError] = useState<ApiError | null>(null);
  const [note, setNote] = useState<string | null>(null);
  async function deliver() {
    setError(null);
    const r = await api.POST('/webhooks/{webhook_id}/parked/deliver', path);
    if (!r.data) return setError(asApiError(r.error, r.response.status));
    setNote(`${r.data.delivered} handed back to delivery; ${r.data.remaining} still parked.`);
    reload();
  }
  return (
    <section aria-labelledby="parked-title">
      <h2 id="parked-title">Parked events</h2>
      {note ? <p role="status">{note}</p> : null}
      {error ? <ErrorBox error={error} /> : null}
      <Shown load={load} what="parked events">
        {(l) =>
          l.data.length === 0 ? (
            <Empty>Nothing parked: no event failed every retry or waited while the endpoint was disabled.</Empty>
          ) : (
            <>
              <EventTable webhookId={props.webhook.id} rows={l.data} />
              {props.member && props.webhook.status === 'enabled' ? (
                <p>
                  <button type="button" onClick={() => void deliver()}>
                    Deliver parked events
                  </button>
                </p>
              ) : props.member ? (
                <p className="muted">Enable the endpoint to deliver its parked events.</p>
              ) : null}
            </>
          )
        }
      </Shown>
    </section>
  );
}

export function WebhookEventPage() {
  const { id = '', eventId = '' } = useParams();
  const { load: session } = useSession();
  const member = session.state === 'ready' && can(session.data.role, 'member');
  const path = { params: { path: { webhook_id: id, event_id: eventId } } };
  const [event, reloadEvent] = useLoad(() => api.GET('/webhooks/{webhook_id}/events/{event_id}', path), [id, eventId]);
  const [attempts, reloadAttempts] = useLoad(
    () =>
      api.GET('/webhooks/{webhook_id}/events/{event_id}/attempts', {
        params: { ...path.params, query: { limit: '100' } },
      }),
    [id, eventId],
  );
  const [error, setError] = useState<ApiError | null>(null);
  const [note, setNote] = useState<string | null>(null);
  async function replay() {
    setError(null);
    const r = await api.POST('/webhooks/{webhook_id}/events/{event_id}/replay', path);
    if (!r.response.ok) return setError(asApiError(r.error, r.response.status));
    setNote('Replayed: the event is sent again within a second or so.');
    reloadEvent();
    reloadAttempts();
  }
  return (
    <>
      <p>
        <Link to={`/dashboard/webhooks/${id}`}>← The endpoint</Link>
      </p>
      <Shown load={event} what="the event">
        {(e) => (
          <>
            <h1>{e.type}</h1>
            <dl className="facts">
              <dt>Status</dt>
              <dd>
                <span className={`badge ${e.status}`}>{e.status}</span>
              </dd>
              <dt>Attempts</dt>
              <dd>{e.attempt_count}</dd>
              <dt>Last HTTP status</dt>
              <dd>{e.last_http_status ?? '—'}</dd>
              <dt>Next attempt</dt>
              <dd>{formatTime(e.next_attempt_at)}</dd>
              <dt>Created</dt>
              <dd>{formatTime(e.created_at)}</dd>
            </dl>
            {member ? (
              <p>
                <button type="button" onClick={() => void replay()}>
                  Replay
                </button>{' '}
                <button
                  type="button"
                  className="secondary"
                  onClick={() => {
                    reloadEvent();
                    reloadAttempts();
                  }}
                >
                  Refresh
                </button>
              </p>
            ) : null}
            {note ? <p role="status">{note}</p> : null}
            {error ? <ErrorBox error={error} /> : null}
            <h2>Payload</h2>
            <pre className="code-block">{JSON.stringify(e.payload, null, 2)}</pre>
          </>
        )}
      </Shown>
      <h2>Attempts</h2>
      <Shown load={attempts} what="attempts">
        {(l) => (l.data.length === 0 ? <Empty>Not attempted yet.</Empty> : <Attempts rows={l.data} />)}
      </Shown>
    </>
  );
}

function Attempts({ rows }: { rows: Schemas['WebhookAttempt'][] }) {
  return (
    <ol className="timeline attempts">
      {rows.map((a) => (
        <li key={a.id}>
          <time dateTime={a.sent_at}>{formatTime(a.sent_at)}</time> #{a.attempt_number}{' '}
          <span className={`badge ${a.http_status_code && a.http_status_code < 300 ? 'delivered' : 'failed'}`}>
            {a.http_status_code ? `HTTP ${a.http_status_code}` : 'no answer'}
          </span>{' '}
          in {a.duration_ms} ms
          {a.error ? <span className="response"> — {a.error}</span> : null}
          {a.response ? <pre className="code-block">{a.response}</pre> : null}
        </li>
      ))}
    </ol>
  );
}
