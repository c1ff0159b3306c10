// A broadcast past draft: its status moves and counts (refreshed while it is on its way, and once sent while its
// copies are), cancel while queued, scheduled or sending, duplicate into a new draft, its recipients by what happened
// to their copy, and the links they clicked (clicks and unique clicks, humans only). Times in the browser's timezone.
import { useEffect, useRef, useState } from 'react';
import { useNavigate } from 'react-router';
import { api, asApiError, type ApiError } from '../../api/client';
import { can, useSession } from '../../session';
import { formatTime } from '../../time';
import { Empty, ErrorBox, Pager, Shown, Stale, useLoad } from '../../ui';
import { audienceOf } from './Broadcasts';
import type { Broadcast } from './draft';
import { useNames } from './names';

const MOVING = new Set(['queued', 'scheduled', 'sending']);
const TYPES = [
  'sent',
  'delivered',
  'opened',
  'clicked',
  'bounced',
  'complained',
  'unsubscribed',
  'suppressed',
] as const;
type RecipientType = (typeof TYPES)[number];

/** Answers in a row that changed nothing after which a sent broadcast's copies are no longer followed (30 s). */
const GIVE_UP = 20;

/** Copies neither delivered nor bounced yet: a sent broadcast's deliveries go on after its last copy was made. */
const inFlight = (x: Broadcast) => x.status === 'sent' && x.counts.delivered + x.counts.bounced < x.counts.recipients;

/**
 * The broadcast asked again every 1.5 s while it moves (queued, scheduled, sending) and, once sent, while copies are
 * on their way; a copy that never arrives (suppressed or failed at delivery, retried for hours) would keep the page
 * asking, so that ends after GIVE_UP answers that changed nothing. An ask that fails is said (the counts shown are the
 * last answer's) until the next answer.
 */
function useFollowed(b: Broadcast): [Broadcast, boolean, ApiError | undefined] {
  const [fresh, setFresh] = useState(b);
  const [refreshError, setRefreshError] = useState<ApiError | undefined>(undefined);
  const [unchanged, setUnchanged] = useState(0);
  const last = useRef('');
  const following = MOVING.has(fresh.status) || (inFlight(fresh) && unchanged < GIVE_UP);
  useEffect(() => {
    if (!following) return;
    const timer = setInterval(() => {
      api
        .GET('/broadcasts/{id}', { params: { path: { id: b.id } } })
        .then((r) => {
          if (!r.data) return setRefreshError(asApiError(r.error, r.response.status));
          setRefreshError(undefined);
          const seen = `${r.data.status} ${JSON.stringify(r.data.counts)}`;
          setUnchanged((n) => (seen === last.current ? n + 1 : 0));
          last.current = seen;
          setFresh(r.data);
        })
        // Unanswered (the api unreachable): said so, and the next tick asks again.
        .catch((e) => setRefreshError(asApiError(e)));
    }, 1500);
    return () => clearInterval(timer);
  }, [following, b.id]);
  return [fresh, following, following ? refreshError : undefined];
}

export function Report({ broadcast: b, reload }: { broadcast: Broadcast; reload: () => void }) {
  const { load: session } = useSession();
  const member = session.state === 'ready' && can(session.data.role, 'member');
  const names = useNames();
  const navigate = useNavigate();
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const [fresh, following, refreshError] = useFollowed(b);
  const moving = MOVING.has(fresh.status);
  async function act(what: 'cancel' | 'duplicate') {
    setBusy(true);
    setError(null);
    const p = { params: { path: { id: b.id } } };
    const r =
      what === 'cancel'
        ? await api.POST('/broadcasts/{id}/cancel', p)
        : await api.POST('/broadcasts/{id}/duplicate', p);
    setBusy(false);
    if (!r.data) return setError(asApiError(r.error, r.response.status));
    if (what === 'cancel') reload();
    else navigate(`/dashboard/broadcasts/${r.data.id}`);
  }
  const c = fresh.counts;
  return (
    <>
      <div className="editor-top">
        <h1>{fresh.name || '(no name)'}</h1>
        <span className={`badge ${fresh.status}`} id="broadcast-status">
          {fresh.status}
        </span>
        {member ? (
          <span className="toolbar">
            {moving ? (
              <button type="button" className="danger" disabled={busy} onClick={() => void act('cancel')}>
                Cancel broadcast
              </button>
            ) : null}
            <button type="button" className="secondary" disabled={busy} onClick={() => void act('duplicate')}>
              Duplicate
            </button>
          </span>
        ) : null}
      </div>
      {error ? <ErrorBox error={error} /> : null}
      {refreshError ? <Stale what="the broadcast" error={refreshError} /> : null}
      <div className="report-grid">
        <section className="panel" aria-labelledby="summary-title">
          <h2 id="summary-title">Summary</h2>
          <dl className="facts">
            <dt>From</dt>
            <dd>{fresh.from}</dd>
            <dt>Subject</dt>
            <dd>{fresh.subject}</dd>
            <dt>Audience</dt>
            <dd>{audienceOf(fresh, names)}</dd>
          </dl>
          <h3>Status</h3>
          <ol className="moves">
            <li>Created {formatTime(fresh.created_at)}</li>
            {fresh.scheduled_at ? <li>Scheduled for {formatTime(fresh.scheduled_at)}</li> : null}
            {fresh.started_at ? <li>Sending since {formatTime(fresh.started_at)}</li> : null}
            {fresh.sent_at ? <li>Sent {formatTime(fresh.sent_at)}</li> : null}
            {fresh.canceled_at ? <li>Canceled {formatTime(fresh.canceled_at)}</li> : null}
            {fresh.failure_reason ? <li>Failed: {fresh.failure_reason}</li> : null}
          </ol>
        </section>
        <section className="panel" aria-labelledby="counts-title">
          <h2 id="counts-title">Counts</h2>
          <dl className="counts" id="broadcast-counts">
            {(
              [
                ['Sent', c.recipients],
                ['Delivered', c.delivered],
                ['Opened', c.opened],
                ['Clicked', c.clicked],
                ['Bounced', c.bounced],
                ['Complained', c.complained],
                ['Suppressed', c.suppressed],
              ] as const
            ).map(([label, n]) => (
              <div key={label} data-count={label.toLowerCase()}>
                <dt>{label}</dt>
                <dd>{n}</dd>
              </div>
            ))}
          </dl>
          {following && fresh.status === 'sent' ? (
            <p className="muted" role="status" id="counts-following">
              Copies are still on their way: the counts follow them.
            </p>
          ) : null}
          <p className="hint">Opens and clicks count people only (link scanners are left out).</p>
        </section>
      </div>
      <Recipients id={b.id} tick={c.recipients + c.delivered} />
      <ClickedLinks id={b.id} />
    </>
  );
}

function Recipients({ id, tick }: { id: string; tick: number }) {
  const [type, setType] = useState<RecipientType>('sent');
  const extra = type === 'bounced' ? 'Bounce' : type === 'opened' || type === 'clicked' ? 'Times' : null;
  const [after, setAfter] = useState<string[]>([]);
  const cursor = after[after.length - 1];
  const [list] = useLoad(
    () =>
      api.GET('/broadcasts/{id}/recipients', {
        params: { path: { id }, query: { type, limit: '20', ...(cursor ? { after: cursor } : {}) } },
      }),
    [id, type, cursor, after.length === 0 ? tick : 0],
  );
  return (
    <section className="panel" aria-labelledby="recipients-title">
      <h2 id="recipients-title">Recipients</h2>
      <label className="field inline-field">
        <span>Show recipients</span>
        <select
          value={type}
          onChange={(e) => {
            setType(e.target.value as RecipientType);
            setAfter([]);
          }}
        >
          {TYPES.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </label>
      <Shown load={list} what="recipients">
        {(page) =>
          page.data.length === 0 && after.length === 0 ? (
            <Empty>No recipient is {type}.</Empty>
          ) : (
            <>
              <div className="table-wrap">
                <table id="recipients-table">
                  <thead>
                    <tr>
                      <th scope="col">Address</th>
                      {extra ? <th scope="col">{extra}</th> : null}
                    </tr>
                  </thead>
                  <tbody>
                    {page.data.map((r) => (
                      <tr key={r.id}>
                        <td>{r.email}</td>
                        {extra ? <td>{r.bounce_type ?? r.count ?? ''}</td> : null}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager after={after} setAfter={setAfter} list={page} />
            </>
          )
        }
      </Shown>
    </section>
  );
}

function ClickedLinks({ id }: { id: string }) {
  const [after, setAfter] = useState<string[]>([]);
  const cursor = after[after.length - 1];
  const [list] = useLoad(
    () =>
      api.GET('/broadcasts/{id}/clicked-links', {
        params: { path: { id }, query: { limit: '20', ...(cursor ? { after: cursor } : {}) } },
      }),
    [id, cursor],
  );
  return (
    <section className="panel" aria-labelledby="links-title">
      <h2 id="links-title">Clicked links</h2>
      <Shown load={list} what="clicked links">
        {(page) =>
          page.data.length === 0 && after.length === 0 ? (
            <Empty>No link clicked yet.</Empty>
          ) : (
            <>
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Link</th>
                      <th scope="col">Clicks</th>
                      <th scope="col">Unique clicks</th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.data.map((l) => (
                      <tr key={l.id}>
                        <td className="url">{l.url}</td>
                        <td>{l.clicks}</td>
                        <td>{l.unique_clicks}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager after={after} setAfter={setAfter} list={page} />
            </>
          )
        }
      </Shown>
    </section>
  );
}
