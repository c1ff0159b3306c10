// A domain's extras for members and admins: DKIM key rotation, publishing the records by DNS update (auto-configure,
// RFC 2136 with the customer's TSIG key) and the brand logo (BIMI). A viewer sees the logo only.
import { useState, type ChangeEvent } from 'react';
import { api, asApiError, type ApiError, type Schemas } from '../../api/client';
import { useConfirm } from '../../dialog';
import { Field, FormError, Submit, text, useSubmit } from '../../form';
import { ErrorBox, useLoad } from '../../ui';
import { here } from './links';

type Domain = Schemas['Domain'];

export function RotateDkim({ domain, changed }: { domain: Domain; changed: () => void }) {
  const [error, setError] = useState<ApiError | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const confirm = useConfirm();
  async function rotate() {
    const sure = await confirm.ask(
      'Rotate the DKIM key?',
      'Rotate',
      'A new selector is published; signing moves to it once it verifies.',
    );
    if (!sure) return;
    setError(null);
    const r = await api.POST('/domains/{domain_id}/dkim/rotate', { params: { path: { domain_id: domain.id } } });
    if (!r.data) return setError(asApiError(r.error, r.response.status));
    setNote(`New DKIM selector “${r.data.selector}”: publish its record below; the old key stays valid 7 days.`);
    changed();
  }
  return (
    <section aria-labelledby="dkim-title">
      <h2 id="dkim-title">DKIM key</h2>
      <p>
        <button type="button" className="secondary" onClick={() => void rotate()}>
          Rotate the DKIM key
        </button>
      </p>
      {note ? <p role="status">{note}</p> : null}
      {error ? <ErrorBox error={error} /> : null}
      {confirm.dialog}
    </section>
  );
}

export function AutoConfigure({ domain, changed }: { domain: Domain; changed: () => void }) {
  const [result, setResult] = useState<Schemas['AutoconfigureResponse'] | null>(null);
  const [keep, setKeep] = useState(false);
  const form = useSubmit(
    (f) => {
      const pick = (k: string) => (text(f, k) ? { [k]: text(f, k) } : {});
      return api.POST('/domains/{domain_id}/auto-configure', {
        params: { path: { domain_id: domain.id } },
        body: {
          ...pick('server'),
          ...pick('zone'),
          ...pick('key_name'),
          ...pick('secret'),
          ...(text(f, 'port') ? { port: Number(text(f, 'port')) } : {}),
          algorithm: text(f, 'algorithm') as 'hmac-sha256' | 'hmac-sha512',
          keep_credential: keep,
        },
      });
    },
    (r) => {
      setResult(r);
      changed();
    },
  );
  return (
    <details className="panel" id="auto-configure">
      <summary>Publish the records by DNS update (auto-configure)</summary>
      <p>
        Give your DNS server and a TSIG key allowed to update the zone; the platform adds its records and never deletes
        one it did not create. Leave the key fields empty to use a credential kept earlier.
      </p>
      <form id="auto-configure-form" onSubmit={form.onSubmit}>
        <Field label="DNS server (host or IP)" name="server" />
        <Field label="Port" name="port" inputMode="numeric" />
        <Field label="Zone (default: the domain)" name="zone" />
        <Field label="TSIG key name" name="key_name" />
        <label className="field">
          <span>Algorithm</span>
          <select name="algorithm" defaultValue="hmac-sha256">
            <option>hmac-sha256</option>
            <option>hmac-sha512</option>
          </select>
        </label>
        <Field label="TSIG secret (base64)" name="secret" type="password" autoComplete="off" />
        <label className="check">
          <input type="checkbox" checked={keep} onChange={(e) => setKeep(e.target.checked)} /> Keep this credential
          (encrypted) for later updates
        </label>
        <FormError error={form.error} />
        <Submit busy={form.busy}>Publish the records</Submit>
      </form>
      {result ? <AutoResult r={result} /> : null}
    </details>
  );
}

function AutoResult({ r }: { r: Schemas['AutoconfigureResponse'] }) {
  const list = (title: string, lines: string[]) =>
    lines.length ? (
      <>
        <h3>{title}</h3>
        <ul>
          {lines.map((l) => (
            <li key={l}>
              <code>{l}</code>
            </li>
          ))}
        </ul>
      </>
    ) : null;
  return (
    <div role="status" id="auto-configure-result">
      <p>
        Done: {r.created.length} created, {r.updated.length} replaced, {r.conflicts.length} in conflict
        {r.credential_kept ? '; the credential is kept' : ''}.
      </p>
      {list('Created', r.created)}
      {list('Replaced', r.updated)}
      {list('Conflicts (left untouched: remove them yourself)', r.conflicts)}
    </div>
  );
}

export function BrandLogo({ domain, member, changed }: { domain: Domain; member: boolean; changed: () => void }) {
  const path = { params: { path: { domain_id: domain.id } } };
  const [logo, reload] = useLoad(() => api.GET('/domains/{domain_id}/brand/logo', path), [domain.id]);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const confirm = useConfirm();
  async function upload(e: ChangeEvent<HTMLInputElement>) {
    const file = e.target.files?.[0];
    e.target.value = '';
    if (!file) return;
    setBusy(true);
    setError(null);
    const r = await api.PUT('/domains/{domain_id}/brand/logo', { ...path, body: { svg: await file.text() } });
    setBusy(false);
    if (!r.response.ok) return setError(asApiError(r.error, r.response.status));
    reload();
    changed();
  }
  async function remove() {
    if (!(await confirm.ask('Remove the brand logo?', 'Remove', 'Its BIMI record goes too.'))) return;
    const r = await api.DELETE('/domains/{domain_id}/brand/logo', path);
    if (!r.response.ok) return setError(asApiError(r.error, r.response.status));
    reload();
    changed();
  }
  const none = logo.state === 'error' && logo.error.statusCode === 404;
  return (
    <section aria-labelledby="brand-title">
      <h2 id="brand-title">Brand logo (BIMI)</h2>
      {logo.state === 'loading' ? <p className="loading">Loading the logo…</p> : null}
      {logo.state === 'error' && !none ? <ErrorBox error={logo.error} /> : null}
      {none ? <p className="muted">No logo yet.</p> : null}
      {logo.state === 'ready' ? (
        <div className="logo">
          <img src={here(logo.data.url)} alt={`The brand logo of ${domain.name}`} width="64" height="64" />
          <p>
            {logo.data.bytes} bytes, uploaded {new Date(logo.data.uploaded_at).toLocaleString()}
          </p>
        </div>
      ) : null}
      {member ? (
        <p className="actions">
          <label className="button secondary">
            {busy ? 'Uploading…' : logo.state === 'ready' ? 'Replace the logo (SVG)' : 'Upload a logo (SVG)'}
            <input
              type="file"
              accept=".svg,image/svg+xml"
              className="visually-hidden"
              id="logo-file"
              onChange={(e) => void upload(e)}
            />
          </label>
          {logo.state === 'ready' ? (
            <button type="button" className="secondary danger" onClick={() => void remove()}>
              Remove the logo
            </button>
          ) : null}
        </p>
      ) : null}
      <p className="muted">An SVG Tiny PS file, square, at most 32 KB.</p>
      {error ? <ErrorBox error={error} /> : null}
      {confirm.dialog}
    </section>
  );
}
