// The import's upload form (members): the file, read only for its header row (the file itself goes to the api as a
// part of a multipart form straight from the disk: a 50 MB file costs the page no memory), each column mapped to a
// contact field or property (`column_map`), the segments to add the imported contacts to and their topic choices.
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { api } from '../../api/client';
import { ErrorBox, useLoad } from '../../ui';
import { useAction } from './common';
import { columnMap, FIELDS, readHeader, twice, type Mapping } from './import-form';

export const MAX_BYTES = 52_428_800;

export function Upload() {
  const navigate = useNavigate();
  const send = useAction();
  const [file, setFile] = useState<File | null>(null);
  const [columns, setColumns] = useState<string[]>([]);
  const [mapping, setMapping] = useState<Mapping>({});
  const [segments, setSegments] = useState<string[]>([]);
  const [topics, setTopics] = useState<Record<string, string>>({});
  const [onConflict, setOnConflict] = useState<'skip' | 'upsert'>('skip');
  const tooBig = file !== null && file.size > MAX_BYTES;
  const doubled = twice(mapping);
  async function choose(f: File | null) {
    setFile(f);
    setMapping({});
    setColumns(f && f.size <= MAX_BYTES ? await readHeader(f).catch(() => []) : []);
  }
  function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    if (!file || tooBig || doubled.length > 0) return;
    const form = new FormData();
    // The File itself: the browser streams it from the disk as the request's body.
    form.append('file', file, file.name);
    form.append('on_conflict', onConflict);
    const map = columnMap(mapping);
    if (map) form.append('column_map', JSON.stringify(map));
    if (segments.length > 0) form.append('segments', JSON.stringify(segments.map((id) => ({ id }))));
    const chosen = Object.entries(topics).filter(([, s]) => s !== '');
    if (chosen.length > 0)
      form.append('topics', JSON.stringify(chosen.map(([id, subscription]) => ({ id, subscription }))));
    void send.run(
      () => api.POST('/contacts/imports', { body: form as never, bodySerializer: (b: unknown) => b as FormData }),
      (r) => navigate(`/dashboard/contacts/imports/${r.id}`),
    );
  }
  return (
    <form className="panel stack" id="import-form" onSubmit={onSubmit}>
      <h2>Import a CSV</h2>
      <p className="hint">
        A header row, then a contact a row: <code>email</code>, and <code>first_name</code>, <code>last_name</code>,{' '}
        <code>unsubscribed</code> where you have them, or any columns you map below. Up to 50 MB.
      </p>
      <label className="field">
        <span>CSV file</span>
        <input
          type="file"
          name="file"
          accept=".csv,text/csv"
          required
          onChange={(e) => void choose(e.target.files?.[0] ?? null)}
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
      {columns.length > 0 ? <Columns columns={columns} mapping={mapping} setMapping={setMapping} /> : null}
      {doubled.length > 0 ? (
        <p role="alert" className="error">
          More than one column is mapped to {doubled.join(', ')}: map each to one column.
        </p>
      ) : null}
      <Targets segments={segments} setSegments={setSegments} topics={topics} setTopics={setTopics} />
      <label className="field">
        <span>An address that is a contact already</span>
        <select value={onConflict} onChange={(e) => setOnConflict(e.target.value as 'skip' | 'upsert')}>
          <option value="skip">Skip its row</option>
          <option value="upsert">Update the contact from its row</option>
        </select>
      </label>
      <button type="submit" disabled={send.busy || !file || tooBig || doubled.length > 0} aria-busy={send.busy}>
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

/** Each column of the header with what it fills: by its own name (the default), a field, or a property. */
function Columns(props: { columns: string[]; mapping: Mapping; setMapping: (m: Mapping) => void }) {
  const [properties] = useLoad(() => api.GET('/contact-properties', { params: { query: { limit: '100' } } }), []);
  const known = properties.state === 'ready' ? properties.data.data : [];
  return (
    <fieldset className="properties" id="column-map">
      <legend>Columns</legend>
      <p className="hint">
        A column named like a field (<code>email</code>, <code>first_name</code>…) is read as that field unless you map
        it; other columns are skipped unless mapped.
      </p>
      {props.columns.map((column) => (
        <label className="field" key={column}>
          <span>
            Column <code>{column}</code>
          </span>
          <select
            name={`map-${column}`}
            value={props.mapping[column] ?? ''}
            onChange={(e) => props.setMapping({ ...props.mapping, [column]: e.target.value })}
          >
            <option value="">As named</option>
            {FIELDS.map(([field, label]) => (
              <option key={field} value={field}>
                {label}
              </option>
            ))}
            {known.map((p) => (
              <option key={p.key} value={`property:${p.key}`}>
                Property: {p.key}
              </option>
            ))}
          </select>
        </label>
      ))}
    </fieldset>
  );
}

/** The segments to add every imported contact to, and a topic choice for each. */
function Targets(props: {
  segments: string[];
  setSegments: (s: string[]) => void;
  topics: Record<string, string>;
  setTopics: (t: Record<string, string>) => void;
}) {
  const [segments] = useLoad(() => api.GET('/segments', { params: { query: { limit: '100' } } }), []);
  const [topics] = useLoad(() => api.GET('/topics', { params: { query: { limit: '100' } } }), []);
  const segmentList = segments.state === 'ready' ? segments.data.data : [];
  const topicList = topics.state === 'ready' ? topics.data.data : [];
  return (
    <>
      {segmentList.length > 0 ? (
        <fieldset className="properties" id="import-segments">
          <legend>Add the contacts to segments</legend>
          {segmentList.map((s) => (
            <label className="check" key={s.id}>
              <input
                type="checkbox"
                checked={props.segments.includes(s.id)}
                onChange={(e) =>
                  props.setSegments(
                    e.target.checked ? [...props.segments, s.id] : props.segments.filter((id) => id !== s.id),
                  )
                }
              />
              {s.name}
            </label>
          ))}
        </fieldset>
      ) : null}
      {topicList.length > 0 ? (
        <fieldset className="properties" id="import-topics">
          <legend>Topic choices for the contacts</legend>
          {topicList.map((t) => (
            <label className="field" key={t.id}>
              <span>{t.name}</span>
              <select
                value={props.topics[t.id] ?? ''}
                onChange={(e) => props.setTopics({ ...props.topics, [t.id]: e.target.value })}
              >
                <option value="">Leave as it is</option>
                <option value="opt_in">Opt in</option>
                <option value="opt_out">Opt out</option>
              </select>
            </label>
          ))}
        </fieldset>
      ) : null}
    </>
  );
}
