// Contacts: the team's contacts a page at a time (cursor paging: the api reads one page, whatever the team's size),
// searched by address or name, narrowed to a segment's members, or both; every choice is in the URL.
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, type Schemas } from '../../api/client';
import { Field, FormError, Submit, text, useSubmit } from '../../form';
import { formatTime } from '../../time';
import { Empty, Shown, useLoad } from '../../ui';
import { Pager, useCursor, useMember } from './common';

const PAGE = 50;

export default function Contacts() {
  const member = useMember();
  const { params, after, before, go } = useCursor();
  const search = params.get('search') ?? undefined;
  const segment = params.get('segment') ?? undefined;
  const [list] = useLoad(
    () =>
      api.GET('/contacts', {
        params: {
          query: {
            limit: String(PAGE),
            ...(after ? { after } : {}),
            ...(before ? { before } : {}),
            ...(search ? { search } : {}),
            ...(segment ? { segment_id: segment } : {}),
          },
        },
      }),
    [after, before, search, segment],
  );
  return (
    <>
      <div className="heading-row">
        <h1>Contacts</h1>
        <div className="actions">
          <Link className="button" to="/dashboard/contacts/imports">
            {member ? 'Import a CSV' : 'Imports'}
          </Link>
        </div>
      </div>
      {member ? <NewContact /> : null}
      <Filters search={search} segment={segment} go={go} />
      <Shown load={list} what="contacts">
        {(l) =>
          l.data.length === 0 ? (
            <Empty>
              {search
                ? `No ${segment ? 'member' : 'contact'}'s address or name contains “${search}”.`
                : segment
                  ? 'This segment has no members yet.'
                  : 'No contacts yet. Add one above or import a CSV.'}
            </Empty>
          ) : (
            <>
              <ContactTable rows={l.data} />
              <Pager ids={l.data.map((c) => c.id)} hasMore={l.has_more} after={after} before={before} go={go} />
            </>
          )
        }
      </Shown>
    </>
  );
}

function Filters(props: { search?: string; segment?: string; go: (c: Record<string, string | undefined>) => void }) {
  const [segments] = useLoad(() => api.GET('/segments', { params: { query: { limit: '100' } } }), []);
  const [q, setQ] = useState(props.search ?? '');
  return (
    <div className="filters">
      <form
        className="inline-form"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          // Within the chosen segment, if one is.
          props.go({ search: q.trim() || undefined, segment: props.segment });
        }}
      >
        <label className="field search">
          <span>Search contacts</span>
          <input type="search" value={q} onChange={(e) => setQ(e.target.value)} placeholder="Address or name" />
        </label>
        <button type="submit">Search</button>
      </form>
      <label className="field">
        <span>Segment</span>
        <select
          value={props.segment ?? ''}
          onChange={(e) => {
            setQ('');
            props.go({ segment: e.target.value || undefined, search: undefined });
          }}
        >
          <option value="">All contacts</option>
          {segments.state === 'ready'
            ? segments.data.data.map((s) => (
                <option key={s.id} value={s.id}>
                  {s.name}
                </option>
              ))
            : null}
        </select>
      </label>
    </div>
  );
}

export function ContactTable({ rows }: { rows: Schemas['ContactListItem'][] }) {
  return (
    <div className="table-wrap">
      <table id="contacts-table">
        <thead>
          <tr>
            <th scope="col">Address</th>
            <th scope="col" className="wide-only">
              Name
            </th>
            <th scope="col">Subscribed</th>
            <th scope="col" className="wide-only">
              Added
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((c) => (
            <tr key={c.id}>
              <td className="address">
                <Link to={`/dashboard/contacts/${c.id}`}>{c.email}</Link>
              </td>
              <td className="wide-only">{[c.first_name, c.last_name].filter(Boolean).join(' ') || '—'}</td>
              <td>{c.unsubscribed ? <span className="badge bounced">unsubscribed</span> : 'yes'}</td>
              <td className="wide-only">{formatTime(c.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function NewContact() {
  const navigate = useNavigate();
  const add = useSubmit(
    (f) =>
      api.POST('/contacts', {
        body: {
          email: text(f, 'email'),
          first_name: text(f, 'first_name') || null,
          last_name: text(f, 'last_name') || null,
        },
      }),
    (c) => navigate(`/dashboard/contacts/${c.id}`),
  );
  return (
    <details className="panel">
      <summary>Add a contact</summary>
      <form className="inline" onSubmit={add.onSubmit} id="new-contact-form">
        <Field label="Address" name="email" type="email" required />
        <Field label="First name" name="first_name" />
        <Field label="Last name" name="last_name" />
        <Submit busy={add.busy}>Add contact</Submit>
        <FormError error={add.error} />
      </form>
    </details>
  );
}
