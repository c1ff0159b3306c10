// One webhook endpoint: its facts, and for members: edit (URL, events), disable or enable, rotate the signing secret
// (the new one shown once), delete. Below: its events (each with its own page of attempts) and its parked events,
// which an enabled endpoint can have delivered again.
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, asApiError, type ApiError, type Schemas } from '../../api/client';
import { can, useSession } from '../../session';
import { formatTime } from '../../time';
import { useConfirm } from '../../dialog';
import { ErrorBox, Shown, useLoad } from '../../ui';
import { EndpointForm, SecretOnce } from './WebhookForm';
import { EventList, Parked } from './WebhookEvents';

type Detail = Schemas['WebhookDetail'];

export function WebhookPage() {
  const { id = '' } = useParams();
  const { load: session } = useSession();
  const member = session.state === 'ready' && can(session.data.role, 'member');
  const [hook, reload] = useLoad(
    () => api.GET('/webhooks/{webhook_id}', { params: { path: { webhook_id: id } } }),
    [id],
  );
  const [tick, setTick] = useState(0);
  // Outside the loaded part, so a message outlives the reload its action causes.
  const said = useSaid();
  const changed = () => {
    reload();
    setTick((t) => t + 1);
  };
  return (
    <>
      <p>
        <Link to="/dashboard/webhooks">← Webhooks</Link>
      </p>
      {said.note ? <p role="status">{said.note}</p> : null}
      {said.error ? <ErrorBox error={said.error} /> : null}
      {said.secret ? <SecretOnce secret={said.secret} close={() => said.setSecret(null)} /> : null}
      <Shown load={hook} what="the endpoint">
        {(w) => (
          <>
            <h1 className="url">{w.endpoint}</h1>
            <dl className="facts">
              <dt>Status</dt>
              <dd>
                <span className={`badge ${w.status}`}>{w.status}</span>
              </dd>
              <dt>Signing secret</dt>
              <dd>
                {/* The api masks all but the last four characters; a short mask keeps the line on a phone. */}
                <code id="masked-secret" title="Only its last four characters are shown">
                  {`••••••••${w.signing_secret.slice(-4)}`}
                </code>
              </dd>
              <dt>Events</dt>
              <dd>{w.events.join(', ')}</dd>
              <dt>Created</dt>
              <dd>{formatTime(w.created_at)}</dd>
            </dl>
            {member ? <Actions w={w} changed={changed} said={said} /> : null}
            <EventList webhookId={w.id} key={`e${tick}`} />
            <Parked webhook={w} member={member} key={`p${tick}`} />
          </>
        )}
      </Shown>
    </>
  );
}

function useSaid() {
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [note, setNote] = useState<string | null>(null);
  return { secret, setSecret, error, setError, note, setNote };
}

function Actions({ w, changed, said }: { w: Detail; changed: () => void; said: ReturnType<typeof useSaid> }) {
  const navigate = useNavigate();
  const path = { params: { path: { webhook_id: w.id } } };
  const [editing, setEditing] = useState(false);
  const confirm = useConfirm();
  const { setSecret, setError, setNote } = said;
  async function run<T>(answer: Promise<{ data?: T; error?: unknown; response: Response }>, said: string) {
    setError(null);
    setNote(null);
    const r = await answer;
    if (!r.response.ok) {
      setError(asApiError(r.error, r.response.status));
      return undefined;
    }
    setNote(said);
    return r.data;
  }
  async function setStatus(status: 'enabled' | 'disabled') {
    const said =
      status === 'disabled'
        ? 'Disabled: no more deliveries; what was still to be sent is parked.'
        : 'Enabled: new events are delivered again.';
    if (await run(api.PATCH('/webhooks/{webhook_id}', { ...path, body: { status } }), said)) changed();
  }
  async function rotate() {
    const sure = await confirm.ask(
      'Rotate the signing secret?',
      'Rotate',
      'The current secret stops signing from the next attempt on; the new one is shown once.',
    );
    if (!sure) return;
    const r = await run(api.POST('/webhooks/{webhook_id}/signing-secret/rotate', path), 'The secret is rotated.');
    if (r) {
      setSecret(r.signing_secret);
      changed();
    }
  }
  async function remove() {
    if (!(await confirm.ask('Delete this endpoint?', 'Delete', `${w.endpoint}, with its events and attempts.`))) return;
    if (await run(api.DELETE('/webhooks/{webhook_id}', path), 'Deleted.')) navigate('/dashboard/webhooks');
  }
  return (
    <>
      <p className="actions">
        <button type="button" className="secondary" onClick={() => setEditing(!editing)} aria-expanded={editing}>
          Edit
        </button>
        {w.status === 'enabled' ? (
          <button type="button" className="secondary" onClick={() => void setStatus('disabled')}>
            Disable
          </button>
        ) : (
          <button type="button" className="secondary" onClick={() => void setStatus('enabled')}>
            Enable
          </button>
        )}
        <button type="button" className="secondary" onClick={() => void rotate()}>
          Rotate signing secret
        </button>
        <button type="button" className="danger secondary" onClick={() => void remove()}>
          Delete
        </button>
      </p>
      {editing ? (
        <EndpointForm
          id="edit-webhook-form"
          title="Edit the endpoint"
          submit="Save"
          initial={w}
          send={(body) => api.PATCH('/webhooks/{webhook_id}', { ...path, body })}
          done={() => {
            setEditing(false);
            changed();
          }}
        />
      ) : null}
      {confirm.dialog}
    </>
  );
}
