// Contact properties: typed custom fields every contact can carry. Members create them (key and type are fixed
// then), change a fallback value, and delete them.
import { useState } from 'react';
import { api, type Schemas } from '../../api/client';
import { Field, FormError, Submit, text, useSubmit } from '../../form';
import { Empty, ErrorBox, Shown, useLoad } from '../../ui';
import { ConfirmDelete, useAction, useMember } from './common';

type Property = Schemas['ContactPropertyListItem'];
type Type = Property['type'];

/** A fallback as its type wants it; empty is none. A number that is not one is sent for the api to refuse. */
function fallbackOf(type: Type, raw: string): string | number | boolean | null {
  if (raw === '') return null;
  if (type === 'number') return Number.isFinite(Number(raw)) ? Number(raw) : raw;
  if (type === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : raw;
  return raw;
}

export default function Properties() {
  const member = useMember();
  const [list, reload] = useLoad(() => api.GET('/contact-properties', { params: { query: { limit: '100' } } }), []);
  const add = useSubmit((f) => {
    const type = text(f, 'type') as Type;
    return api.POST('/contact-properties', {
      body: { key: text(f, 'key'), type, fallback_value: fallbackOf(type, text(f, 'fallback_value')) as never },
    });
  }, reload);
  return (
    <>
      <h1>Contact properties</h1>
      {member ? (
        <form className="panel inline" id="new-property-form" onSubmit={add.onSubmit}>
          <Field label="Key" name="key" required />
          <label className="field">
            <span>Type</span>
            <select name="type" defaultValue="string">
              <option value="string">string</option>
              <option value="number">number</option>
              <option value="boolean">boolean</option>
            </select>
          </label>
          <Field label="Fallback value (optional)" name="fallback_value" />
          <Submit busy={add.busy}>Create property</Submit>
          <FormError error={add.error} />
        </form>
      ) : null}
      <Shown load={list} what="contact properties">
        {(l) =>
          l.data.length === 0 ? (
            <Empty>No contact properties yet. A property is a typed field (plan, seats, vip) on every contact.</Empty>
          ) : (
            <div className="table-wrap">
              <table id="properties-table">
                <thead>
                  <tr>
                    <th scope="col">Key</th>
                    <th scope="col">Type</th>
                    <th scope="col">Fallback</th>
                    {member ? <th scope="col">Actions</th> : null}
                  </tr>
                </thead>
                <tbody>
                  {l.data.map((p) => (
                    <PropertyRow key={p.id} p={p} member={member} reload={reload} />
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

function PropertyRow({ p, member, reload }: { p: Property; member: boolean; reload: () => void }) {
  const [editing, setEditing] = useState(false);
  const del = useAction();
  const save = useSubmit(
    (f) =>
      api.PATCH('/contact-properties/{id}', {
        params: { path: { id: p.id } },
        body: { fallback_value: fallbackOf(p.type, text(f, 'fallback_value')) as never },
      }),
    () => {
      setEditing(false);
      reload();
    },
  );
  return (
    <tr>
      <td>
        <code>{p.key}</code>
      </td>
      <td>{p.type}</td>
      <td>
        {editing ? (
          <form className="inline" onSubmit={save.onSubmit} aria-label={`Change the fallback of ${p.key}`}>
            <Field label={`Fallback of ${p.key}`} name="fallback_value" defaultValue={String(p.fallback_value ?? '')} />
            <Submit busy={save.busy}>Save</Submit>
            <FormError error={save.error} />
          </form>
        ) : p.fallback_value === null ? (
          '—'
        ) : (
          String(p.fallback_value)
        )}
      </td>
      {member ? (
        <td className="actions">
          <button type="button" className="small" onClick={() => setEditing(!editing)} aria-label={`Edit ${p.key}`}>
            {editing ? 'Cancel' : 'Edit'}
          </button>
          <ConfirmDelete
            what={p.key}
            busy={del.busy}
            onConfirm={() =>
              void del.run(() => api.DELETE('/contact-properties/{id}', { params: { path: { id: p.id } } }), reload)
            }
          />
          {del.error ? <ErrorBox error={del.error} /> : null}
        </td>
      ) : null}
    </tr>
  );
}
