// CSV imports: the upload (members) and the team's imports, newest first. The file goes to the api as a part of a
// multipart form straight from the disk (the page never reads it: a 50 MB file costs the page no memory); once
// stored, the import's page follows its progress.
import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, type Schemas } from '../../api/client';
import { formatTime } from '../../time';
import { Empty, ErrorBox, Shown, useLoad } from '../../ui';
import { Pager, useAction, useCursor, useMember } from './common';

export const MAX_BYTES = 52_428_800;

export default function Imports() {
  const member = useMember();
  const { after, before, go } = useCursor();
  const [list] = useLoad(
    () =>
      api.GET('/contacts/imports', {
        params: { query: { limit: '20', ...(after ? { after } : {}), ...(before ? { before } : {}) } },
      }),
    [after, before],
  );
  return (
    <>
      <p className="crumbs">
        <Link to="/dashboard/contacts">Contacts</Link>
      </p>
      <h1>Imports</h1>
      {member ? <Upload /> : null}
      <h2>Past imports</h2>
      <Shown load={list} what="imports">
        {(l) =>
          l.data.length === 0 ? (
            <Empty>No imports yet.</Empty>
          ) : (
            <>
              <ImportTable rows={l.data} />
              <Pager ids={l.data.map((i) => i.id)} hasMore={l.has_more} after={after} before={before} go={go} />
            </>
          )
        }
      </Shown>
    </>
  );
}

function Upload() {
  const navigate = useNavigate();
  const send = useAction();
  const [file, setFile] = useState<File | null>(null);
  const [onConflict, setOnConflict] = useState<'skip' | 'upsert'>('skip');
  const tooBig = file !== null && file.size > MAX_BYTES;
  function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    if (!file || tooBig) return;
    const form = new FormData();
    // The File itself: the browser streams it from the disk as the request's body.
    form.append('file', file, file.name);
    form.append('on_conflict', onConflict);
    void send.run(
      () =>
        api.POST('/contacts/imports', {
          body: form as never,
          bodySerializer: (b: unknown) => b as FormData,
        }),
      (r) => navigate(`/dashboard/contacts/imports/${r.id}`),
    );
  }
  return (
    <form className="panel stack" id="import-form" onSubmit={onSubmit}>
      <h2>Import a CSV</h2>
      <p className="hint">
        A header row, then a contact a row: <code>email</code>, and <code>first_name</code>, <code>last_name</code>,{' '}
        <code>unsubscribed</code> where you have them. Up to 50 MB.
      </p>
      <label className="field">
        <span>CSV file</span>
        <input
          type="file"
          name="file"
          accept=".csv,text/csv"
          required
          onChange={(e) => setFile(e.target.files?.[0] ?? null)}
        />
      </label>
      {file ? (
        <p className="hint" id="file-size">
          {file.name}:{' '}
          {file.size < 1_048_576 ? `${Math.ceil(file.size / 1024)} KB` : `${(file.size / 1_048_576).toFixed(1)} MB`}
        </p>
      ) : null}
      {tooBig ? (
        <p role="alert" className="error">
          This file is over 50 MB: split it in two.
        </p>
      ) : null}
      <label className="field">
        <span>An address that is a contact already</span>
        <select value={onConflict} onChange={(e) => setOnConflict(e.target.value as 'skip' | 'upsert')}>
          <option value="skip">Skip its row</option>
          <option value="upsert">Update the contact from its row</option>
        </select>
      </label>
      <button type="submit" disabled={send.busy || !file || tooBig} aria-busy={send.busy}>
        {send.busy ? 'Uploading…' : 'Upload and import'}
      </button>
      {send.busy ? (
        <progress className="upload" aria-label={`Uploading ${file?.name ?? 'the file'}`}>
          Uploading…
        </progress>
      ) : null}
      {send.error ? <ErrorBox error={send.error} /> : null}
    </form>
  );
}

function ImportTable({ rows }: { rows: Schemas['ContactImport'][] }) {
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">Status</th>
            <th scope="col">Rows</th>
            <th scope="col" className="wide-only">
              Created / updated / skipped / failed
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((i) => (
            <tr key={i.id}>
              <td>
                <Link to={`/dashboard/contacts/imports/${i.id}`}>{formatTime(i.created_at)}</Link>
              </td>
              <td>
                <span className={`badge ${i.status}`}>{i.status.replace('_', ' ')}</span>
              </td>
              <td>{i.counts.total.toLocaleString()}</td>
              <td className="wide-only">
                {[i.counts.created, i.counts.updated, i.counts.skipped, i.counts.failed]
                  .map((n) => n.toLocaleString())
                  .join(' / ')}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
