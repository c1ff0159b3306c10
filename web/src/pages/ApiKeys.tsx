// API keys: the list (each key's permission and, for a sending key bound to one, its domain; revoked keys, which the
// api still lists, are left out), a new key (permission, an optional sending domain) whose token is shown once,
// revoking. Keys are an admin's (the api refuses the others regardless); the actions are hidden from members and
// viewers.
import { useState } from 'react';
import { api, type Schemas } from '../api/client';
import { useConfirm } from '../dialog';
import { Field, FormError, Submit, text, useSubmit } from '../form';
import { can, useSession } from '../session';
import { formatTime } from '../time';
import { CopyButton, Empty, ErrorBox, Shown, useLoad } from '../ui';

type Permission = Schemas['ApiKey']['permission'];

export function ApiKeys() {
  const { load: session } = useSession();
  const admin = session.state === 'ready' && can(session.data.role, 'admin');
  const [keys, reload] = useLoad(() => api.GET('/api-keys', { params: { query: { limit: '100' } } }), []);
  // Beside the keys (not after them): the names of the domains keys are bound to, and the new key's choice.
  const [domains] = useLoad(() => api.GET('/domains', { params: { query: { limit: '100' } } }), []);
  const [created, setCreated] = useState<Schemas['ApiKeyCreated'] | null>(null);
  return (
    <>
      <h1>API keys</h1>
      {created ? <ShownOnce created={created} close={() => setCreated(null)} /> : null}
      {admin ? (
        <NewKey
          domains={domains.state === 'ready' ? domains.data.data : null}
          created={(k) => {
            setCreated(k);
            reload();
          }}
        />
      ) : null}
      <Shown load={keys} what="API keys">
        {(list) => {
          const live = list.data.filter((k) => k.status !== 'revoked');
          return live.length === 0 ? (
            <Empty>No API keys yet.{admin ? ' Create one above to send with the API.' : ''}</Empty>
          ) : (
            <KeyTable
              keys={live}
              domains={domains.state === 'ready' ? domains.data.data : []}
              admin={admin}
              revoked={reload}
            />
          );
        }}
      </Shown>
    </>
  );
}

type Domain = Schemas['DomainListItem'];

function NewKey(props: { domains: Domain[] | null; created: (k: Schemas['ApiKeyCreated']) => void }) {
  const { domains, created } = props;
  const [permission, setPermission] = useState<Permission>('full_access');
  const create = useSubmit(
    (f) =>
      api.POST('/api-keys', {
        body: {
          name: text(f, 'name'),
          permission,
          ...(permission === 'sending_access' && text(f, 'domain_id') ? { domain_id: text(f, 'domain_id') } : {}),
        },
      }),
    (k) => {
      // The form is reset once sent: the permission (held here, not by the select) goes back with it.
      setPermission('full_access');
      created(k);
    },
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
      {permission === 'sending_access' && domains ? (
        <label className="field">
          <span>Domain</span>
          <select name="domain_id" defaultValue="">
            <option value="">Any domain of the team</option>
            {domains.map((d) => (
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

/** Where a key may send from: its one domain (by name once the domains are in), or any of the team's. */
function boundTo(k: Schemas['ApiKey'], domains: Domain[]): string {
  if (!k.domain_id) return k.permission === 'sending_access' ? 'Any domain' : '—';
  return domains.find((d) => d.id === k.domain_id)?.name ?? k.domain_id;
}

function KeyTable(props: { keys: Schemas['ApiKey'][]; domains: Domain[]; admin: boolean; revoked: () => void }) {
  const { keys, domains, admin, revoked } = props;
  const [error, setError] = useState<Schemas['Error'] | null>(null);
  const confirm = useConfirm();
  async function revoke(k: Schemas['ApiKey']) {
    if (!(await confirm.ask(`Revoke “${k.name}”?`, 'Revoke', 'Requests with this key fail from now on.'))) return;
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
              <th scope="col">Domain</th>
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
                  <code className="nowrap">{k.key_prefix}…</code>
                </td>
                <td>{k.permission}</td>
                <td className="nowrap">{boundTo(k, domains)}</td>
                <td className="wide-only">{formatTime(k.last_used_at)}</td>
                <td className="wide-only">{formatTime(k.created_at)}</td>
                {admin ? (
                  <td>
                    <button
                      type="button"
                      className="small danger"
                      aria-label={`Revoke ${k.name}`}
                      onClick={() => void revoke(k)}
                    >
                      Revoke
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {confirm.dialog}
    </>
  );
}
