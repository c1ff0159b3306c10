// Topics: what recipients subscribe to or opt out of (the preference page lists the public ones). Members create,
// edit (name, description, visibility; the default is fixed at creation) and delete them.
import { useState } from 'react';
import { api, type Schemas } from '../../api/client';
import { Field, FormError, Submit, text, useSubmit } from '../../form';
import { Empty, ErrorBox, Shown, useLoad } from '../../ui';
import { ConfirmDelete, useAction, useMember } from './common';

type Topic = Schemas['TopicListItem'];
type Visibility = Topic['visibility'];

export default function Topics() {
  const member = useMember();
  const [list, reload] = useLoad(() => api.GET('/topics', { params: { query: { limit: '100' } } }), []);
  const add = useSubmit(
    (f) =>
      api.POST('/topics', {
        body: {
          name: text(f, 'name'),
          description: text(f, 'description') || undefined,
          default_subscription: text(f, 'default_subscription') as Topic['default_subscription'],
          visibility: text(f, 'visibility') as Visibility,
        },
      }),
    reload,
  );
  return (
    <>
      <h1>Topics</h1>
      {member ? (
        <form className="panel inline" id="new-topic-form" onSubmit={add.onSubmit}>
          <Field label="Name" name="name" required />
          <Field label="Description" name="description" />
          <label className="field">
            <span>Without a choice, a contact is</span>
            <select name="default_subscription" defaultValue="opt_in">
              <option value="opt_in">subscribed (opt in)</option>
              <option value="opt_out">not subscribed (opt out)</option>
            </select>
          </label>
          <VisibilitySelect />
          <Submit busy={add.busy}>Create topic</Submit>
          <FormError error={add.error} />
        </form>
      ) : null}
      <Shown load={list} what="topics">
        {(l) =>
          l.data.length === 0 ? (
            <Empty>No topics yet. Topics let recipients choose what they get.</Empty>
          ) : (
            <ul className="plain cards" id="topics-list">
              {l.data.map((t) => (
                <TopicItem key={t.id} t={t} member={member} reload={reload} />
              ))}
            </ul>
          )
        }
      </Shown>
    </>
  );
}

function VisibilitySelect({ value }: { value?: Visibility }) {
  return (
    <label className="field">
      <span>Visibility</span>
      <select name="visibility" defaultValue={value ?? 'public'}>
        <option value="public">public (every preference page)</option>
        <option value="private">private (its own emails only)</option>
      </select>
    </label>
  );
}

function TopicItem({ t, member, reload }: { t: Topic; member: boolean; reload: () => void }) {
  const [editing, setEditing] = useState(false);
  const del = useAction();
  const save = useSubmit(
    (f) =>
      api.PATCH('/topics/{id}', {
        params: { path: { id: t.id } },
        body: {
          name: text(f, 'name'),
          description: text(f, 'description') || null,
          visibility: text(f, 'visibility') as Visibility,
        },
      }),
    () => {
      setEditing(false);
      reload();
    },
  );
  if (editing)
    return (
      <li className="panel">
        <form className="inline" onSubmit={save.onSubmit} aria-label={`Edit ${t.name}`}>
          <Field label="Name" name="name" required defaultValue={t.name} />
          <Field label="Description" name="description" defaultValue={t.description ?? ''} />
          <VisibilitySelect value={t.visibility} />
          <Submit busy={save.busy}>Save topic</Submit>
          <button type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
          <FormError error={save.error} />
        </form>
      </li>
    );
  return (
    <li className="panel item">
      <div>
        <strong className="topic-name">{t.name}</strong>{' '}
        <span className="badge">{t.default_subscription === 'opt_in' ? 'opt in' : 'opt out'}</span>{' '}
        <span className="badge">{t.visibility}</span>
        {t.description ? <p className="hint">{t.description}</p> : null}
      </div>
      {member ? (
        <div className="actions">
          <button type="button" className="small" aria-label={`Edit ${t.name}`} onClick={() => setEditing(true)}>
            Edit
          </button>
          <ConfirmDelete
            what={t.name}
            busy={del.busy}
            onConfirm={() => void del.run(() => api.DELETE('/topics/{id}', { params: { path: { id: t.id } } }), reload)}
          />
        </div>
      ) : null}
      {del.error ? <ErrorBox error={del.error} /> : null}
    </li>
  );
}
