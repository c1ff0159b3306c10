// Templates: the list (a search over names and aliases, a page of 100 and more on demand), a new template (blocks or
// HTML) that opens in the editor, duplicate and delete. Members and admins change templates; a viewer reads.
import { useMemo, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, asApiError, type ApiError, type Schemas } from '../../api/client';
import { useConfirm } from '../../dialog';
import { Field, FormError, Submit, text, useSubmit } from '../../form';
import { can, useSession } from '../../session';
import { formatTime } from '../../time';
import { Empty, ErrorBox, Shown, useLoad } from '../../ui';
import { STARTER_HTML, starterDocument } from '../../editor/model';
import '../../editor/editor.css';

type Item = Schemas['TemplateListItem'];
const PAGE = '100';

export function Templates() {
  const { load: session } = useSession();
  const member = session.state === 'ready' && can(session.data.role, 'member');
  const [list, reload] = useLoad(() => api.GET('/templates', { params: { query: { limit: PAGE } } }), []);
  const [more, setMore] = useState<{ items: Item[]; hasMore: boolean } | null>(null);
  const [query, setQuery] = useState('');
  const [failed, setFailed] = useState<ApiError | null>(null);
  const [said, setSaid] = useState('');
  const refresh = (message: string) => {
    setMore(null);
    setSaid(message);
    reload();
  };
  async function loadMore(after: string) {
    const r = await api.GET('/templates', { params: { query: { limit: PAGE, after } } });
    if (!r.data) return setFailed(asApiError(r.error, r.response.status));
    setMore({ items: [...(more?.items ?? []), ...r.data.data], hasMore: r.data.has_more });
  }
  return (
    <>
      <h1>Templates</h1>
      {member ? <NewTemplate /> : null}
      <p role="status" aria-live="polite" className="said">
        {said}
      </p>
      {failed ? <ErrorBox error={failed} /> : null}
      <Shown load={list} what="templates">
        {(first) => {
          const items = [...first.data, ...(more?.items ?? [])];
          const hasMore = more ? more.hasMore : first.has_more;
          if (items.length === 0) return <Empty>No templates yet.{member ? ' Create one above to start.' : ''}</Empty>;
          return (
            <>
              <label className="field search">
                <span>Search templates</span>
                <input type="search" value={query} onChange={(e) => setQuery(e.target.value)} />
              </label>
              <TemplateTable items={items} query={query} member={member} done={refresh} failed={setFailed} />
              {hasMore ? (
                <button type="button" className="secondary" onClick={() => void loadMore(items[items.length - 1].id)}>
                  Show more
                </button>
              ) : null}
            </>
          );
        }}
      </Shown>
    </>
  );
}

function NewTemplate() {
  const navigate = useNavigate();
  const [kind, setKind] = useState<'blocks' | 'html'>('blocks');
  const create = useSubmit(
    (f) =>
      api.POST('/templates', {
        body:
          kind === 'blocks'
            ? { name: text(f, 'name'), document: starterDocument(), variables: [starterVariable] }
            : { name: text(f, 'name'), html: STARTER_HTML, variables: [starterVariable] },
      }),
    (t) => navigate(`/dashboard/templates/${t.id}`),
  );
  return (
    <form className="panel inline" onSubmit={create.onSubmit} id="new-template-form">
      <Field label="Name" name="name" required />
      <label className="field">
        <span>Edit with</span>
        <select name="kind" value={kind} onChange={(e) => setKind(e.target.value as 'blocks' | 'html')}>
          <option value="blocks">Blocks (visual editor)</option>
          <option value="html">HTML</option>
        </select>
      </label>
      <Submit busy={create.busy}>Create template</Submit>
      <FormError error={create.error} />
    </form>
  );
}

const starterVariable = { key: 'NAME', type: 'string' as const, fallback_value: 'there' };

function TemplateTable(p: {
  items: Item[];
  query: string;
  member: boolean;
  done: (message: string) => void;
  failed: (e: ApiError | null) => void;
}) {
  const q = p.query.trim().toLowerCase();
  const shown = useMemo(
    () => (q ? p.items.filter((t) => `${t.name} ${t.alias ?? ''}`.toLowerCase().includes(q)) : p.items),
    [p.items, q],
  );
  const confirm = useConfirm();
  async function act(t: Item, what: 'duplicate' | 'delete') {
    p.failed(null);
    const sure =
      what !== 'delete' ||
      (await confirm.ask(`Delete “${t.name}”?`, 'Delete', 'The template goes with all its versions.'));
    if (!sure) return;
    const path = { params: { path: { id_or_alias: t.id } } };
    const r =
      what === 'delete'
        ? await api.DELETE('/templates/{id_or_alias}', path)
        : await api.POST('/templates/{id_or_alias}/duplicate', path);
    if (!r.response.ok) return p.failed(asApiError(r.error, r.response.status));
    p.done(what === 'delete' ? `Deleted “${t.name}”.` : `Duplicated “${t.name}”.`);
  }
  if (shown.length === 0) return <Empty>No template matches “{p.query}”.</Empty>;
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            <th scope="col" className="wide-only">
              Alias
            </th>
            <th scope="col" className="wide-only">
              Updated
            </th>
            {p.member ? <th scope="col">Actions</th> : null}
          </tr>
        </thead>
        <tbody>
          {shown.map((t) => (
            <tr key={t.id}>
              <td>
                <Link to={`/dashboard/templates/${t.id}`}>{t.name}</Link>
              </td>
              <td>
                <span className={`badge ${t.status}`}>{t.status}</span>
              </td>
              <td className="wide-only">{t.alias ? <code>{t.alias}</code> : '—'}</td>
              <td className="wide-only">{formatTime(t.updated_at)}</td>
              {p.member ? (
                <td>
                  <div className="actions">
                    <button
                      type="button"
                      className="small"
                      aria-label={`Duplicate ${t.name}`}
                      onClick={() => void act(t, 'duplicate')}
                    >
                      Duplicate
                    </button>
                    <button
                      type="button"
                      className="small danger"
                      aria-label={`Delete ${t.name}`}
                      onClick={() => void act(t, 'delete')}
                    >
                      Delete
                    </button>
                  </div>
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
      {confirm.dialog}
    </div>
  );
}
