// One email: its details; a timeline of its events (GET /emails/{email_id}/events: sent, delivered, delayed, bounced,
// complained, opened, clicked, suppressed, ...) and its delivery attempts with their SMTP transcripts, in time order;
// each recipient's state from those events (./email-states.ts); and its HTML in a sandboxed frame (no scripts, no
// same-origin) that opens the email's own page, served with a policy made for an email (./EmailFrame.tsx). While a
// recipient may still change, the page asks again every few seconds without losing what it shows.
import { Fragment, useEffect, useRef } from 'react';
import { Link, useParams } from 'react-router';
import { api, type Schemas } from '../api/client';
import { formatTime } from '../time';
import { Empty, Shown, useQuietLoad, type Answer, type Load } from '../ui';
import { EmailFrame } from './EmailFrame';
import { EVENT_LABELS, eventDetail, pending, recipientStates, type EmailEvent } from './email-states';

type Attempt = Schemas['DeliveryAttempt'];

/** Every 3 s while a recipient may still change. */
const FOLLOW_MS = 3000;
/** The email's own states while a recipient is on its way (GET /emails/{email_id}'s `last_event`). */
const ON_ITS_WAY = new Set<Schemas['Email']['last_event']>(['queued', 'sent', 'delivery_delayed']);
/** At most this many pages of 100 events (an email clicked thousands of times shows its first 1,000 events). */
const EVENT_PAGES = 10;

/** The email's events, oldest first, page after page. */
async function allEvents(id: string): Promise<Answer<{ events: EmailEvent[]; more: boolean }>> {
  const events: EmailEvent[] = [];
  let after: string | undefined;
  for (let page = 0; page < EVENT_PAGES; page++) {
    const r = await api.GET('/emails/{email_id}/events', {
      params: { path: { email_id: id }, query: { limit: '100', ...(after ? { after } : {}) } },
    });
    if (!r.data) return { error: r.error, response: r.response };
    events.push(...r.data.data);
    if (!r.data.has_more) return { data: { events, more: false }, response: r.response };
    after = events[events.length - 1].id;
  }
  return { data: { events, more: true }, response: new Response(null, { status: 200 }) };
}

/**
 * Whether the page follows the email, asking again every FOLLOW_MS while it does. The email, its events and its
 * attempts are three requests: a change committed between their reads shows the events after it and the email
 * before (its badge still `sent`). So the page also follows while the email itself says it is on its way, and looks
 * at the attempts once more when it stops following.
 */
function useFollowing(
  email: Load<Schemas['Email']>,
  events: Load<{ events: EmailEvent[] }>,
  reload: { reloadEmail: () => void; reloadEvents: () => void; reloadAttempts: () => void },
): boolean {
  const following =
    email.state === 'ready' &&
    events.state === 'ready' &&
    (ON_ITS_WAY.has(email.data.last_event) ||
      recipientStates(email.data, events.data.events).some((r) => pending(r.state)));
  const followed = useRef(false);
  useEffect(() => {
    if (!following) {
      if (followed.current) reload.reloadAttempts();
      followed.current = false;
      return;
    }
    followed.current = true;
    const timer = setInterval(() => {
      reload.reloadEmail();
      reload.reloadEvents();
      reload.reloadAttempts();
    }, FOLLOW_MS);
    return () => clearInterval(timer);
  }, [following]);
  return following;
}

export function EmailPage() {
  const { id = '' } = useParams();
  const [email, reloadEmail] = useQuietLoad(
    () => api.GET('/emails/{email_id}', { params: { path: { email_id: id } } }),
    [id],
  );
  const [events, reloadEvents] = useQuietLoad(() => allEvents(id), [id]);
  const [attempts, reloadAttempts] = useQuietLoad(
    () => api.GET('/emails/{email_id}/attempts', { params: { path: { email_id: id }, query: { limit: '100' } } }),
    [id],
  );
  const following = useFollowing(email, events, { reloadEmail, reloadEvents, reloadAttempts });
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
              <Addresses list={e.to} />
              {e.cc ? (
                <>
                  <dt>Cc</dt>
                  <Addresses list={e.cc} />
                </>
              ) : null}
              {e.bcc ? (
                <>
                  <dt>Bcc</dt>
                  <Addresses list={e.bcc} />
                </>
              ) : null}
              <dt>Accepted</dt>
              <dd>
                <time dateTime={e.created_at}>{formatTime(e.created_at)}</time>
              </dd>
              {e.scheduled_at ? (
                <>
                  <dt>Scheduled for</dt>
                  <dd>
                    <time dateTime={e.scheduled_at}>{formatTime(e.scheduled_at)}</time>
                  </dd>
                </>
              ) : null}
              <dt>Status</dt>
              <dd>
                <span className={`badge ${e.last_event}`}>{e.last_event}</span>
                {following ? <span className="muted"> · following its delivery</span> : null}
              </dd>
              <dt>Id</dt>
              <dd>
                <code>{e.id}</code>
              </dd>
            </dl>
            <Shown load={events} what="the email's events">
              {(ev) => (
                <>
                  <h2>Recipients</h2>
                  <Recipients email={e} events={ev.events} />
                  <h2>Timeline</h2>
                  <Shown load={attempts} what="delivery attempts">
                    {(a) => <Timeline email={e} events={ev.events} more={ev.more} attempts={a.data} />}
                  </Shown>
                </>
              )}
            </Shown>
            <h2>Content</h2>
            {e.html ? (
              <EmailFrame page={`/emails/${encodeURIComponent(e.id)}/html`} title="The email's HTML" html={e.html} />
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

function Recipients({ email, events }: { email: Schemas['Email']; events: EmailEvent[] }) {
  return (
    <div className="table-wrap">
      <table id="recipients" className="stacked">
        <thead>
          <tr>
            <th scope="col">Recipient</th>
            <th scope="col">State</th>
            <th scope="col">Since</th>
            <th scope="col">Why</th>
          </tr>
        </thead>
        <tbody>
          {recipientStates(email, events).map((r, i) => (
            <tr key={`${r.kind}-${i}`}>
              <td className="address" data-label="Recipient">
                {r.name}
                {r.kind === 'to' ? null : <span className="muted"> ({r.kind})</span>}
              </td>
              <td data-label="State">
                <span className={`badge ${r.state}`}>{r.state}</span>
              </td>
              <td className="when" data-label="Since">
                {r.since ? <time dateTime={r.since.created_at}>{formatTime(r.since.created_at)}</time> : '—'}
              </td>
              <td className="url" data-label="Why">
                {r.since ? eventDetail(r.since) || '—' : '—'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

type Entry = { at: string; event: EmailEvent } | { at: string; attempt: Attempt };

function Timeline(props: { email: Schemas['Email']; events: EmailEvent[]; more: boolean; attempts: Attempt[] }) {
  const { email, events, more, attempts } = props;
  // Events and attempts in time order; an attempt's outcome event comes after the attempt that produced it.
  const entries: Entry[] = [
    ...events.map((event) => ({ at: event.created_at, event })),
    ...attempts.map((attempt) => ({ at: attempt.started_at, attempt })),
  ].sort((a, b) => a.at.localeCompare(b.at) || ('attempt' in a ? -1 : 0) - ('attempt' in b ? -1 : 0));
  return (
    <ol className="timeline">
      <li>
        <time dateTime={email.created_at}>{formatTime(email.created_at)}</time> <span className="badge">accepted</span>
      </li>
      {entries.map((entry) =>
        'event' in entry ? (
          <EventEntry key={entry.event.id} event={entry.event} />
        ) : (
          <AttemptEntry key={entry.attempt.id} attempt={entry.attempt} />
        ),
      )}
      {more ? <li className="muted">Only the first 1,000 events are shown.</li> : null}
    </ol>
  );
}

function EventEntry({ event }: { event: EmailEvent }) {
  const label = EVENT_LABELS[event.type];
  const detail = eventDetail(event);
  const whole = event.type === 'email.sent' || event.type === 'email.scheduled' || event.type === 'email.canceled';
  return (
    <li data-event={event.type}>
      <time dateTime={event.created_at}>{formatTime(event.created_at)}</time>{' '}
      <span className={`badge ${label}`}>{label}</span>
      {!whole && event.to.length ? (
        <>
          {' '}
          <AddressList list={event.to} />
        </>
      ) : null}
      {detail ? <span className="response"> — {detail}</span> : null}
    </li>
  );
}

function AttemptEntry({ attempt: a }: { attempt: Attempt }) {
  return (
    <li className="attempt">
      <time dateTime={a.started_at}>{formatTime(a.started_at)}</time>{' '}
      <span className={`badge ${a.outcome}`}>{a.outcome}</span> delivery attempt at {a.domain}{' '}
      {a.mx_host ? `via ${a.mx_host}` : '(no connection)'}
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
  );
}

/** Addresses separated by commas, each kept whole on its line as far as it fits. */
function AddressList({ list }: { list: string[] }) {
  return (
    <span className="addresses">
      {list.map((a, i) => (
        <Fragment key={i}>
          <span>
            {a}
            {i < list.length - 1 ? ',' : ''}
          </span>
          {i < list.length - 1 ? ' ' : ''}
        </Fragment>
      ))}
    </span>
  );
}

function Addresses({ list }: { list: string[] }) {
  return (
    <dd>
      <AddressList list={list} />
    </dd>
  );
}
