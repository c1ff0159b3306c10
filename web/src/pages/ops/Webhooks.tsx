// Webhook endpoints: the list, and a new endpoint (URL and event types) whose signing secret is shown once. Members
// and admins create; a viewer reads (the api refuses the others regardless).
import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../../api/client';
import { can, useSession } from '../../session';
import { formatTime } from '../../time';
import { Empty, Shown, useLoad } from '../../ui';
import { EndpointForm, SecretOnce } from './WebhookForm';

export function Webhooks() {
  const { load: session } = useSession();
  const member = session.state === 'ready' && can(session.data.role, 'member');
  const [list, reload] = useLoad(() => api.GET('/webhooks', { params: { query: { limit: '100' } } }), []);
  const [created, setCreated] = useState<{ id: string; signing_secret: string } | null>(null);
  const [adding, setAdding] = useState(false);
  return (
    <>
      <h1>Webhooks</h1>
      {created ? (
        <>
          <SecretOnce secret={created.signing_secret} close={() => setCreated(null)} />
          <p>
            <Link to={`/dashboard/webhooks/${created.id}`}>Open the new endpoint</Link>
          </p>
        </>
      ) : null}
      {member && !adding ? (
        <p>
          <button type="button" onClick={() => setAdding(true)}>
            Add an endpoint
          </button>
        </p>
      ) : null}
      {member && adding ? (
        <EndpointForm
          id="new-webhook-form"
          title="Add an endpoint"
          submit="Create endpoint"
          focusFirst
          send={(body) => api.POST('/webhooks', { body })}
          done={(w) => {
            setCreated(w);
            setAdding(false);
            reload();
          }}
        />
      ) : null}
      <Shown load={list} what="webhook endpoints">
        {(l) =>
          l.data.length === 0 ? (
            <Empty>
              No webhook endpoints yet.{member ? ' Add one to have events POSTed to your server as they happen.' : ''}
            </Empty>
          ) : (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Endpoint</th>
                    <th scope="col">Events</th>
                    <th scope="col">Status</th>
                    <th scope="col" className="wide-only">
                      Created
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {l.data.map((w) => (
                    <tr key={w.id}>
                      <td className="url">
                        <Link to={`/dashboard/webhooks/${w.id}`}>{w.endpoint}</Link>
                      </td>
                      <td>{w.events.length === 1 ? w.events[0] : `${w.events.length} types`}</td>
                      <td>
                        <span className={`badge ${w.status}`}>{w.status}</span>
                      </td>
                      <td className="wide-only">{formatTime(w.created_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Shown>
    </>
  );
}
