// A contact: its fields and property values, its segments and topic choices; members edit it, change its topic
// choices, and delete it (which leaves its topic choices: an opt-out still holds).
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, type Schemas } from '../../api/client';
import { formatTime } from '../../time';
import { Empty, ErrorBox, Shown, useLoad } from '../../ui';
import { ConfirmDelete, useAction, useMember } from './common';
import { ContactEdit } from './ContactEdit';

type Contact = Schemas['Contact'];

export default function ContactPage() {
  const { id = '' } = useParams();
  const member = useMember();
  const navigate = useNavigate();
  const path = { params: { path: { id_or_email: id } } };
  const [contact, reload] = useLoad(() => api.GET('/contacts/{id_or_email}', path), [id]);
  const [editing, setEditing] = useState(false);
  const del = useAction();
  return (
    <>
      <p className="crumbs">
        <Link to="/dashboard/contacts">Contacts</Link>
      </p>
      <Shown load={contact} what="the contact">
        {(c) => (
          <>
            <div className="heading-row">
              <h1 className="address">{c.email}</h1>
              {member ? (
                <div className="actions">
                  <button type="button" onClick={() => setEditing(!editing)} aria-expanded={editing}>
                    {editing ? 'Cancel editing' : 'Edit'}
                  </button>
                  <ConfirmDelete
                    what={c.email}
                    busy={del.busy}
                    onConfirm={() =>
                      void del.run(
                        () => api.DELETE('/contacts/{id_or_email}', path),
                        () => navigate('/dashboard/contacts'),
                      )
                    }
                  />
                </div>
              ) : null}
            </div>
            {del.error ? <ErrorBox error={del.error} /> : null}
            {editing ? (
              <ContactEdit
                contact={c}
                done={() => {
                  setEditing(false);
                  reload();
                }}
              />
            ) : (
              <Facts c={c} />
            )}
            <Segments id={c.id} member={member} />
            <Topics id={c.id} member={member} />
          </>
        )}
      </Shown>
    </>
  );
}

function Facts({ c }: { c: Contact }) {
  const props = Object.entries(c.properties);
  return (
    <section className="panel" aria-labelledby="facts-h">
      <h2 id="facts-h">Details</h2>
      <dl className="facts">
        <dt>First name</dt>
        <dd>{c.first_name ?? '—'}</dd>
        <dt>Last name</dt>
        <dd>{c.last_name ?? '—'}</dd>
        <dt>Subscribed</dt>
        <dd>{c.unsubscribed ? 'No: unsubscribed from everything' : 'Yes'}</dd>
        <dt>Added</dt>
        <dd>{formatTime(c.created_at)}</dd>
        {props.map(([key, v]) => (
          <div key={key} className="fact">
            <dt>
              <code>{key}</code>
            </dt>
            <dd>{String(v.value)}</dd>
          </div>
        ))}
      </dl>
      {props.length === 0 ? <p className="hint">No property values.</p> : null}
    </section>
  );
}

function Segments({ id, member }: { id: string; member: boolean }) {
  const path = { id_or_email: id };
  const [list, reload] = useLoad(
    () => api.GET('/contacts/{id_or_email}/segments', { params: { path, query: { limit: '100' } } }),
    [id],
  );
  const change = useAction();
  const remove = (segment_id: string) =>
    void change.run(
      () => api.DELETE('/contacts/{id_or_email}/segments/{segment_id}', { params: { path: { ...path, segment_id } } }),
      reload,
    );
  return (
    <section className="panel" aria-labelledby="segments-h">
      <h2 id="segments-h">Segments (added by hand)</h2>
      {change.error ? <ErrorBox error={change.error} /> : null}
      <Shown load={list} what="segments">
        {(l) =>
          l.data.length === 0 ? (
            <Empty>Not in any segment by hand.</Empty>
          ) : (
            <ul className="chips">
              {l.data.map((s) => (
                <li key={s.id}>
                  <Link to={`/dashboard/segments/${s.id}`}>{s.name}</Link>
                  {member ? (
                    <button
                      type="button"
                      className="link"
                      aria-label={`Remove from ${s.name}`}
                      onClick={() => remove(s.id)}
                    >
                      Remove
                    </button>
                  ) : null}
                </li>
              ))}
            </ul>
          )
        }
      </Shown>
      {member ? <AddToSegment id={id} done={reload} run={change.run} /> : null}
    </section>
  );
}

function AddToSegment(props: { id: string; done: () => void; run: ReturnType<typeof useAction>['run'] }) {
  const [segments] = useLoad(() => api.GET('/segments', { params: { query: { limit: '100' } } }), []);
  const [chosen, setChosen] = useState('');
  if (segments.state !== 'ready' || segments.data.data.length === 0) return null;
  return (
    <form
      className="inline add-segment"
      onSubmit={(e) => {
        e.preventDefault();
        if (!chosen) return;
        void props.run(
          () =>
            api.POST('/contacts/{id_or_email}/segments/{segment_id}', {
              params: { path: { id_or_email: props.id, segment_id: chosen } },
            }),
          props.done,
        );
      }}
    >
      <label className="field">
        <span>Add to a segment</span>
        <select value={chosen} onChange={(e) => setChosen(e.target.value)}>
          <option value="">(choose)</option>
          {segments.data.data.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={!chosen}>
        Add
      </button>
    </form>
  );
}

function Topics({ id, member }: { id: string; member: boolean }) {
  const path = { params: { path: { id_or_email: id } } };
  const [list, reload] = useLoad(
    () => api.GET('/contacts/{id_or_email}/topics', { params: { ...path.params, query: { limit: '100' } } }),
    [id],
  );
  const change = useAction();
  return (
    <section className="panel" aria-labelledby="topics-h">
      <h2 id="topics-h">Topics</h2>
      {change.error ? <ErrorBox error={change.error} /> : null}
      <Shown load={list} what="topics">
        {(l) =>
          l.data.length === 0 ? (
            <Empty>The team has no topics.</Empty>
          ) : (
            <ul className="plain">
              {l.data.map((t) => (
                <li key={t.id} className="topic-row">
                  <span>{t.name}</span>
                  {member ? (
                    <select
                      aria-label={`Subscription to ${t.name}`}
                      value={t.subscription}
                      disabled={change.busy}
                      onChange={(e) =>
                        void change.run(
                          () =>
                            api.PATCH('/contacts/{id_or_email}/topics', {
                              ...path,
                              body: { topics: [{ id: t.id, subscription: e.target.value as 'opt_in' | 'opt_out' }] },
                            }),
                          reload,
                        )
                      }
                    >
                      <option value="opt_in">Subscribed</option>
                      <option value="opt_out">Not subscribed</option>
                    </select>
                  ) : (
                    <span className="badge">{t.subscription === 'opt_in' ? 'subscribed' : 'not subscribed'}</span>
                  )}
                </li>
              ))}
            </ul>
          )
        }
      </Shown>
    </section>
  );
}
