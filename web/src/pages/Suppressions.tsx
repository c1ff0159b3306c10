// Suppressions: the addresses the team does not send to (bounces, complaints, unsubscribes, added by hand), by
// origin; adding and removing one (members and admins).
import { useState } from 'react';
import { api, asApiError, type ApiError, type Schemas } from '../api/client';
import { Field, FormError, Submit, text, useSubmit } from '../form';
import { can, useSession } from '../session';
import { formatTime } from '../time';
import { Empty, ErrorBox, Shown, useLoad } from '../ui';

type Item = Schemas['SuppressionListItem'];

export function Suppressions() {
  const { load: session } = useSession();
  const member = session.state === 'ready' && can(session.data.role, 'member');
  const [list, reload] = useLoad(() => api.GET('/suppressions', { params: { query: { limit: '100' } } }), []);
  const add = useSubmit((f) => api.POST('/suppressions', { body: { email: text(f, 'email') } }), reload);
  const [error, setError] = useState<ApiError | null>(null);
  async function remove(s: Item) {
    setError(null);
    const r = await api.DELETE('/suppressions/{id_or_email}', { params: { path: { id_or_email: s.id } } });
    if (r.response.ok) reload();
    else setError(asApiError(r.error, r.response.status));
  }
  return (
    <>
      <h1>Suppressions</h1>
      {member ? (
        <form className="panel inline" onSubmit={add.onSubmit} id="add-suppression-form">
          <Field label="Address to suppress" name="email" required />
          <Submit busy={add.busy}>Suppress</Submit>
          <FormError error={add.error} />
        </form>
      ) : null}
      {error ? <ErrorBox error={error} /> : null}
      <Shown load={list} what="suppressions">
        {(l) =>
          l.data.length === 0 ? (
            <Empty>No suppressed addresses. Bounces and complaints add them here.</Empty>
          ) : (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Address</th>
                    <th scope="col">Origin</th>
                    <th scope="col" className="wide-only">
                      Since
                    </th>
                    {member ? <th scope="col">Actions</th> : null}
                  </tr>
                </thead>
                <tbody>
                  {l.data.map((s) => (
                    <tr key={s.id}>
                      <td>{s.email}</td>
                      <td>{s.origin}</td>
                      <td className="wide-only">{formatTime(s.created_at)}</td>
                      {member ? (
                        <td>
                          <button
                            type="button"
                            className="small danger"
                            aria-label={`Remove ${s.email}`}
                            onClick={() => void remove(s)}
                          >
                            Remove
                          </button>
                        </td>
                      ) : null}
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
