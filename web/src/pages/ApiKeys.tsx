// API keys: the list, a new key (permission, an optional sending domain) whose token is shown once, revoking.
// Keys are an admin's (the api refuses the others regardless); the actions are hidden from members and viewers.
import { useState } from 'react';
import { api, type Schemas } from '../api/client';
import { Field, FormError, Submit, text, useSubmit } from '../form';
import { can, useSession } from '../session';
import { formatTime } from '../time';
import { CopyButton, Empty, ErrorBox, Shown, useLoad } from '../ui';

type Permission = Schemas['ApiKey']['permission'];

export function ApiKeys() {
  const { load: session } = useSession();
  const admin = session.state === 'ready' && can(session.data.role, 'admin');
  const [keys, reload] = useLoad(() => api.GET('/api-keys', { params: { query: { limit: '100' } } }), []);
  const [created, setCreated] = useState<Schemas['ApiKeyCreated'] | null>(null);
  return (
    <>
      <h1>API keys</h1>
      {created ? <ShownOnce created={created} close={() => setCreated(null)} /> : null}
      {admin ? (
        <NewKey
          created={(k) => {
            setCreated(k);
            reload();
          }}
        />
      ) : null}
      <Shown load={keys} what="API keys">
        {(list) =>
          list.data.length === 0 ? (
            <Empty>No API keys yet.{admin ? ' Create one above to send with the API.' : ''}</Empty>
          ) : (
            <KeyTable keys={list.data} admin={admin} revoked={reload} />
          )
        }
      </Shown>
    </>
  );
}

function NewKey({ created }: { created: (k: Schemas['ApiKeyCreated']) => void }) {
  const [permission, setPermission] = useState<Permission>('full_access');
  const [domains] = useLoad(() => api.GET('/domains', { params: { query: { limit: '100' } } }), []);
  const create = useSubmit(
    (f) =>
      api.POST('/api-keys', {
        body: {
          name: text(f, 'name'),
          permission,
          ...(permission === 'sending_access' && text(f, 'domain_id') ? { domain_id: text(f, 'domain_id') } : {}),
        },
      }),
    created,
  );
  return (
    <form className="panel" onSubmit={create.onSubmit} id="new-key-form">
      <h2>Create an API key</h2>
      <Field label="Name" name="name" required />
      <label className="field">
        <span>Permission</span>
        <select name="permission" value={permission} onChange={(e) => setPermission(e.target.value as Permission)}>
          <option value="full_access">Full access</option>
          <option value="sending_access">Sending access</option>
        </select>
      </label>
      {permission === 'sending_access' && domains.state === 'ready' ? (
        <label className="field">
          <span>Domain</span>
          <select name="domain_id" defaultValue="">
            <option value="">Any domain of the team</option>
            {domains.data.data.map((d) => (
              <option key={d.id} value={d.id}>
                {d.name}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <FormError error={create.error} />
      <Submit busy={create.busy}>Create key</Submit>
    </form>
  );
}

function ShownOnce({ created, close }: { created: Schemas['ApiKeyCreated']; close: () => void }) {
  return (
    <section className="panel once" aria-labelledby="once-title">
      <h2 id="once-title">Your new API key</h2>
      <p>Copy it now: it is shown only this once.</p>
      <p className="secret">
        <code id="new-key-token">{created.token}</code> <CopyButton text={created.token} label="Copy the API key" />
      </p>
      <button type="button" onClick={close}>
        Done
      </button>
    </section>
  );
}

function KeyTable({ keys, admin, revoked }: { keys: Schemas['ApiKey'][]; admin: boolean; revoked: () => void }) {
  const [error, setError] = useState<Schemas['Error'] | null>(null);
  async function revoke(k: Schemas['ApiKey']) {
    if (!window.confirm(`Revoke the key “${k.name}”? Requests with it fail from now on.`)) return;
    const r = await api.DELETE('/api-keys/{id}', { params: { path: { id: k.id } } });
    if (r.response.ok) revoked();
    else setError(r.error ?? null);
  }
  return (
    <>
      {error ? <ErrorBox error={error} /> : null}
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Permission</th>
              <th scope="col" className="wide-only">
                Last used
              </th>
              <th scope="col" className="wide-only">
                Created
              </th>
              {admin ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.id}>
                <td>{k.name}</td>
                <td>
                  <code>{k.key_prefix}…</code>
                </td>
                <td>{k.permission}</td>
                <td className="wide-only">{formatTime(k.last_used_at)}</td>
                <td className="wide-only">{formatTime(k.created_at)}</td>
                {admin ? (
                  <td>
                    <button type="button" className="small danger" onClick={() => void revoke(k)}>
                      Revoke
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
